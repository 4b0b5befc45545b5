<?php

/*
 * leaselab conformance harness (own code): one long-lived PHP process per engine. Reads
 * one JSON request per line on stdin, answers one JSON line on stdout. It loads the real,
 * unmodified runtime classes from the checkout given as argv[1] (PSR-4
 * Netresearch\NrLlm\ -> Classes/), the TYPO3 database stand-ins beside this file on
 * Debian's Doctrine DBAL 3.6, and the minimal stand-ins in standins/.
 */

declare(strict_types=1);

error_reporting(E_ALL);
set_error_handler(static function (int $no, string $msg, string $file, int $line): bool {
    throw new ErrorException($msg, 0, $no, $file, $line);
});

$runtimeSrc = rtrim($argv[1] ?? '', '/');
if ($runtimeSrc === '' || !is_file($runtimeSrc . '/Classes/Service/Tool/AgentRunRepository.php')) {
    fwrite(STDERR, "not a runtime checkout: {$runtimeSrc}\n");
    exit(2);
}
if (!stream_resolve_include_path('Doctrine/DBAL/autoload.php')) {
    fwrite(STDERR, "Doctrine DBAL missing\n");
    exit(3);
}
require_once 'Doctrine/DBAL/autoload.php';
require_once 'Symfony/Component/Console/autoload.php';

spl_autoload_register(static function (string $class) use ($runtimeSrc): void {
    $prefixes = [
        'Netresearch\\NrLlm\\' => $runtimeSrc . '/Classes/',
        'TYPO3\\CMS\\Core\\Database\\' => __DIR__ . '/typo3/',
    ];
    foreach ($prefixes as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $relative = substr($class, strlen($prefix));
            if (str_starts_with($class, 'TYPO3\\CMS\\Core\\Database\\Query\\Restriction\\')) {
                $file = __DIR__ . '/typo3/Query/Restriction/Restrictions.php';
            } else {
                $file = $dir . str_replace('\\', '/', $relative) . '.php';
            }
            if (is_file($file)) {
                require_once $file;
            }
            return;
        }
    }
});
require_once __DIR__ . '/standins/standins.php';
require_once __DIR__ . '/standins/tools.php';

use Doctrine\DBAL\DriverManager;
use Doctrine\DBAL\Schema\Table;
use LeaselabStandin\Clock;
use LeaselabStandin\Identity;
use LeaselabStandin\RecordingBus;
use Netresearch\NrLlm\Command\ReapStaleAgentRunsCommand;
use Netresearch\NrLlm\Domain\Enum\ToolEffect;
use Netresearch\NrLlm\Domain\ValueObject\AgentRun;
use Netresearch\NrLlm\Domain\ValueObject\RunStep;
use Netresearch\NrLlm\Provider\Middleware\FailureClassifier;
use Netresearch\NrLlm\Service\Agent\AgentRunExecutor;
use Netresearch\NrLlm\Service\Agent\AgentRunRequestCodec;
use Netresearch\NrLlm\Service\Agent\QueuedRunCoordinator;
use Netresearch\NrLlm\Service\Agent\QueuedRunFailureRecovery;
use Netresearch\NrLlm\Service\Privacy\ContentRedactor;
use Netresearch\NrLlm\Service\Privacy\RunStepPrivacyFilter;
use Netresearch\NrLlm\Service\Tool\AgentRunHandle;
use Netresearch\NrLlm\Service\Tool\AgentRunPersister;
use Netresearch\NrLlm\Service\Tool\AgentRunRepository;
use Netresearch\NrLlm\Service\Tool\AgentStateCodec;
use Netresearch\NrLlm\Service\Tool\ToolEffectResolver;
use Netresearch\NrLlm\Service\Tool\ToolRegistry;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\BufferedOutput;
use TYPO3\CMS\Core\Database\Connection;
use TYPO3\CMS\Core\Database\ConnectionPool;

const RUN_TABLE = 'tx_nrllm_agentrun';
const EVENT_TABLE = 'tx_nrllm_agentrun_event';

/** @var array<string, array{conn: Connection, repo: AgentRunRepository, persister: AgentRunPersister}> $stacks */
$stacks = [];
$codec = new AgentStateCodec(new LeaselabStandin\PlainEnvelopeCodec());

function stack(array $req): array
{
    global $stacks;
    $id = (string)($req['conn'] ?? 'a');
    if (!isset($stacks[$id])) {
        throw new RuntimeException("no connection '{$id}'");
    }
    return $stacks[$id];
}

function connect(array $req): array
{
    global $stacks, $codec;
    $params = $req['params'];
    $params['wrapperClass'] = Connection::class;
    /** @var Connection $conn */
    $conn = DriverManager::getConnection($params);
    $conn->executeQuery('SELECT 1')->fetchOne();
    $repo = new AgentRunRepository(new ConnectionPool($conn), $codec);
    $filter = new RunStepPrivacyFilter(new LeaselabStandin\MetadataPrivacyPolicy(), new ContentRedactor());
    $stacks[(string)($req['conn'] ?? 'a')] = ['conn' => $conn, 'repo' => $repo, 'persister' => new AgentRunPersister($repo, $filter)];
    return ['platform' => get_class($conn->getDatabasePlatform()), 'server' => serverVersion($conn)];
}

function serverVersion(Connection $conn): string
{
    $platform = $conn->getDatabasePlatform();
    if ($platform instanceof Doctrine\DBAL\Platforms\SqlitePlatform) {
        return 'sqlite ' . (string)$conn->executeQuery('select sqlite_version()')->fetchOne();
    }
    return (string)$conn->executeQuery('select version()')->fetchOne();
}

/** TYPO3's schema migrator turns the parsed MySQL DDL into Doctrine tables; the platform emits the SQL. */
function schema(array $req): array
{
    $conn = stack($req)['conn'];
    $platform = $conn->getDatabasePlatform();
    $isMysql = $platform instanceof Doctrine\DBAL\Platforms\AbstractMySQLPlatform;
    $statements = [];
    foreach ($req['tables'] as $spec) {
        $table = new Table($spec['name']);
        foreach ($spec['columns'] as $col) {
            $options = ['notnull' => (bool)$col['notnull'], 'unsigned' => (bool)$col['unsigned'], 'autoincrement' => (bool)$col['autoincrement']];
            if (array_key_exists('default', $col) && $col['default'] !== null) {
                $options['default'] = $col['default'];
            }
            foreach (['length', 'precision', 'scale'] as $k) {
                if (isset($col[$k])) {
                    $options[$k] = $col[$k];
                }
            }
            $table->addColumn($col['name'], $col['type'], $options);
        }
        $table->setPrimaryKey($spec['primary']);
        foreach ($spec['indexes'] as $index) {
            $table->addIndex($index['columns'], $spec['name'] . '_' . $index['name']);
        }
        if ($isMysql) {
            $table->addOption('engine', 'InnoDB');
            $table->addOption('charset', 'utf8mb4');
            $table->addOption('collation', 'utf8mb4_unicode_ci');
        }
        $conn->executeStatement('DROP TABLE IF EXISTS ' . $conn->quoteIdentifier($spec['name']));
        foreach ($platform->getCreateTableSQL($table) as $sql) {
            $conn->executeStatement($sql);
            $statements[] = $sql;
        }
    }
    return ['sql' => $statements];
}

function setup(array $req): array
{
    $conn = stack($req)['conn'];
    $conn->executeStatement('DELETE FROM ' . $conn->quoteIdentifier(EVENT_TABLE));
    $conn->executeStatement('DELETE FROM ' . $conn->quoteIdentifier(RUN_TABLE));
    global $codec;
    foreach ($req['runs'] ?? [] as $row) {
        foreach (['queued_request' => AgentStateCodec::PURPOSE_QUEUED_REQUEST, 'suspended_state' => AgentStateCodec::PURPOSE_SUSPENDED_STATE] as $col => $purpose) {
            if (is_string($row[$col] ?? null) && $row[$col] !== '') {
                $row[$col] = $codec->encode($row[$col], $purpose);
            }
        }
        $conn->insert(RUN_TABLE, $row);
    }
    foreach ($req['events'] ?? [] as $row) {
        $conn->insert(EVENT_TABLE, $row);
    }
    return [];
}

function dump(Connection $conn): array
{
    $runs = $conn->executeQuery('SELECT * FROM ' . $conn->quoteIdentifier(RUN_TABLE) . ' ORDER BY ' . $conn->quoteIdentifier('uid'))->fetchAllAssociative();
    $events = $conn->executeQuery('SELECT * FROM ' . $conn->quoteIdentifier(EVENT_TABLE) . ' ORDER BY ' . $conn->quoteIdentifier('uid'))->fetchAllAssociative();
    return ['runs' => $runs, 'events' => $events];
}

function decodeArg(mixed $arg, array $stack): mixed
{
    if (!is_array($arg)) {
        return $arg;
    }
    if (array_key_exists('$handle', $arg)) {
        [$uid, $uuid, $seq] = $arg['$handle'];
        $handle = new AgentRunHandle((int)$uid, (string)$uuid);
        $handle->sequence = (int)$seq;
        return $handle;
    }
    if (array_key_exists('$run', $arg)) {
        return $stack['repo']->findByUuid((string)$arg['$run']);
    }
    if (array_key_exists('$step', $arg)) {
        $s = $arg['$step'];
        return new RunStep(kind: $s['kind'], round: (int)$s['round'], durationMs: (float)($s['durationMs'] ?? 0.0), toolName: $s['toolName'] ?? null, toolIsError: $s['toolIsError'] ?? null, content: $s['content'] ?? null);
    }
    return array_map(static fn(mixed $a): mixed => decodeArg($a, $stack), $arg);
}

function encodeRet(mixed $value): mixed
{
    if ($value instanceof AgentRun) {
        return ['$run' => $value->uuid];
    }
    if ($value instanceof AgentRunHandle) {
        return ['$handle' => [$value->runUid, $value->uuid, $value->sequence]];
    }
    if ($value instanceof UnitEnum) {
        return $value instanceof BackedEnum ? $value->value : $value->name;
    }
    if (is_array($value)) {
        return array_map('encodeRet', $value);
    }
    if (is_object($value)) {
        return ['$object' => get_class($value)];
    }
    return $value;
}

function presetup(array $req): void
{
    if (isset($req['setup'])) {
        setup(['conn' => $req['conn'] ?? 'a'] + $req['setup']);
    }
}

function call(array $req): array
{
    presetup($req);
    $stack = stack($req);
    $conn = $stack['conn'];
    Clock::$now = isset($req['clock']) ? (int)$req['clock'] : null;
    $target = $stack[$req['target']];
    $args = array_map(static fn(mixed $a): mixed => decodeArg($a, $stack), $req['args'] ?? []);
    $conn->lastAffected = -1;
    $conn->failNext = $req['fail'] ?? null;
    $error = null;
    $ret = null;
    try {
        $ret = withHooks($req, $stack, static fn(): mixed => $target->{$req['method']}(...$args));
    } catch (Throwable $e) {
        $error = get_class($e) . ': ' . $e->getMessage();
    }
    $conn->failNext = null;
    $out = ['ret' => encodeRet($ret), 'error' => $error, 'affected' => $conn->lastAffected];
    foreach ($args as $arg) {
        if ($arg instanceof AgentRunHandle) {
            $out['handle_sequence'] = $arg->sequence;
        }
    }
    return $out + (($req['dump'] ?? true) ? dump($conn) : []);
}

function buildError(array $t): Throwable
{
    $code = (int)($t['code'] ?? 0);
    return match ($t['cls']) {
        'circuit_open' => new Netresearch\NrLlm\Provider\Exception\CircuitOpenException('leaselab', 30),
        'fallback' => new Netresearch\NrLlm\Provider\Exception\FallbackChainExhaustedException(
            'chain',
            1745712001,
            array_map(static fn(array $a): array => ['configuration' => 'c', 'error' => buildError($a)], $t['attempts'] ?? []),
        ),
        'connection' => new Netresearch\NrLlm\Provider\Exception\ProviderConnectionException('x', $code),
        'network' => new LeaselabStandin\NetworkException('x', $code),
        'configuration' => new Netresearch\NrLlm\Provider\Exception\ProviderConfigurationException('x', $code),
        'response' => new Netresearch\NrLlm\Provider\Exception\ProviderResponseException('x', $code),
        'auth' => new Netresearch\NrLlm\Provider\Exception\ProviderAuthenticationException('x', $code),
        'rate_limit' => new Netresearch\NrLlm\Provider\Exception\ProviderRateLimitException('x', $code),
        'unsupported' => new Netresearch\NrLlm\Provider\Exception\UnsupportedFeatureException('x', $code),
        'provider' => new Netresearch\NrLlm\Provider\Exception\ProviderException('x', $code),
        'audit' => Netresearch\NrLlm\Service\Agent\Exception\AuditPersistenceFailedException::forRun('r', 't'),
        'unfenced' => Netresearch\NrLlm\Service\Agent\Exception\WriteWithoutDurableExecutionException::forTool('r', 't'),
        'runtime' => new RuntimeException('x', $code),
        default => throw new InvalidArgumentException('unknown error kind ' . $t['cls']),
    };
}

function classify(array $req): array
{
    return ['ret' => FailureClassifier::classify(buildError($req['error']))->value];
}

function resolve(array $req): array
{
    $tools = [];
    foreach ($req['tools'] as $t) {
        $tools[] = $t['effect'] === null
            ? new LeaselabStandin\UndeclaredTool($t['name'])
            : new LeaselabStandin\DeclaredTool($t['name'], ToolEffect::from($t['effect']));
    }
    $resolver = new ToolEffectResolver(new ToolRegistry($tools));
    return ['ret' => $resolver->effectFor($req['name'])->value];
}

function reap(array $req): array
{
    presetup($req);
    $stack = stack($req);
    Clock::$now = isset($req['clock']) ? (int)$req['clock'] : null;
    $bus = makeBus($req['bus']);
    $command = new ReapStaleAgentRunsCommand($stack['persister'], $bus);
    $output = new BufferedOutput();
    $exit = withHooks($req, $stack, static fn(): int => $command->run(new ArrayInput(['--limit' => (string)$req['limit']]), $output));
    $text = preg_replace('/\s+/', ' ', $output->fetch());
    $counts = null;
    if (preg_match('/(\d+) requeued, (\d+) dead-lettered, (\d+) skipped/', (string)$text, $m)) {
        $counts = [(int)$m[1], (int)$m[2], (int)$m[3]];
    }
    return ['exit' => $exit, 'counts' => $counts, 'sent' => $bus?->sent ?? []] + dump($stack['conn']);
}

function recover(array $req): array
{
    presetup($req);
    $stack = stack($req);
    Clock::$now = isset($req['clock']) ? (int)$req['clock'] : null;
    $bus = makeBus($req['bus']);
    [$uid, $uuid, $seq] = $req['handle'];
    $handle = new AgentRunHandle((int)$uid, (string)$uuid);
    $handle->sequence = (int)$seq;
    $recovery = new QueuedRunFailureRecovery($stack['persister'], null, $bus);
    $stack['conn']->failNext = $req['fail'] ?? null;
    $result = withHooks($req, $stack, static fn(): mixed => $recovery->recover($handle, (string)$uuid, (string)$req['worker'], buildError($req['error']), []));
    $stack['conn']->failNext = null;
    return ['ret' => $result->outcome->value, 'sent' => $bus?->sent ?? []] + dump($stack['conn']);
}

/*
 * The reproductions (sim/conform/replay.py) interleave processes inside one PHP process:
 * a request's "hooks" hold one of its statements (the n-th whose SQL contains "match") and
 * first run other requests ("run", on another connection, each with its own clock): a stall
 * of that statement, as statement order. "clock_after" is the held process's clock when its
 * statement goes on; "fail" then makes it throw (a store error). A bus {"mode", "inline",
 * "at"} runs "inline" inside its at-th dispatch, as the Sync transport handles a wake-up
 * nested in the dispatch. The nested requests' answers come back, labelled, in the top-level
 * answer's "nested".
 */

/** @var list<array<string, mixed>> $nested */
$nested = [];

/** Run other processes' requests in the middle of this one; the caller's clock and identity are kept. */
function runNested(array $requests): void
{
    global $nested;
    [$clock, $host, $pid] = [Clock::$now, Identity::$host, Identity::$pid];
    foreach ($requests as $request) {
        $nested[] = ['label' => $request['label'] ?? null] + handle($request);
    }
    [Clock::$now, Identity::$host, Identity::$pid] = [$clock, $host, $pid];
}

/** Call $body with the request's statement hooks installed on its connection. */
function withHooks(array $req, array $stack, Closure $body): mixed
{
    /** @var Connection $conn */
    $conn = $stack['conn'];
    $hooks = $req['hooks'] ?? [];
    if ($hooks === []) {
        return $body();
    }
    $seen = array_fill(0, count($hooks), 0);
    $conn->beforeStatement = static function (string $sql) use ($conn, $hooks, &$seen): void {
        foreach ($hooks as $i => $hook) {
            if (stripos($sql, (string)$hook['match']) === false || ++$seen[$i] !== (int)($hook['nth'] ?? 1)) {
                continue;
            }
            $held = $conn->beforeStatement;
            $conn->beforeStatement = null;
            try {
                runNested($hook['run'] ?? []);
            } finally {
                $conn->beforeStatement = $held;
            }
            if (isset($hook['clock_after'])) {
                Clock::$now = (int)$hook['clock_after'];
            }
            if (isset($hook['fail'])) {
                throw new RuntimeException('leaselab: injected store error: ' . $hook['fail']);
            }
        }
    };
    try {
        return $body();
    } finally {
        $conn->beforeStatement = null;
    }
}

/** 'ok', 'throw' or 'none' (no bus), or {"mode": "ok"|"throw", "inline": [requests], "at": n}. */
function makeBus(mixed $spec): ?RecordingBus
{
    if ($spec === 'none') {
        return null;
    }
    if (is_string($spec)) {
        return new RecordingBus($spec);
    }
    $bus = new RecordingBus((string)($spec['mode'] ?? 'ok'));
    $at = (int)($spec['at'] ?? 1);
    $inline = $spec['inline'] ?? [];
    $bus->onDispatch = static function (int $n) use ($at, $inline): void {
        if ($n === $at) {
            runNested($inline);
        }
    };
    return $bus;
}

function identity(array $req): void
{
    Identity::$host = isset($req['host']) ? (string)$req['host'] : null;
    Identity::$pid = isset($req['pid']) ? (int)$req['pid'] : null;
}

/**
 * The real QueuedRunCoordinator::runQueued with the real persister and failure recovery. Its
 * executor and request codec are created without their constructors: the paths replayed here
 * (the claim, the post-claim position, the settles before execution) never reach them, and a
 * path that does ends in an Error reported as "error".
 */
function runQueued(array $req): array
{
    presetup($req);
    $stack = stack($req);
    Clock::$now = isset($req['clock']) ? (int)$req['clock'] : null;
    identity($req);
    $bus = makeBus($req['bus'] ?? 'ok');
    $coordinator = new QueuedRunCoordinator(
        $stack['persister'],
        (new ReflectionClass(AgentRunRequestCodec::class))->newInstanceWithoutConstructor(),
        (new ReflectionClass(AgentRunExecutor::class))->newInstanceWithoutConstructor(),
        new QueuedRunFailureRecovery($stack['persister'], null, $bus),
        null,
        $bus,
    );
    $error = null;
    $ret = null;
    try {
        $result = withHooks($req, $stack, static fn(): mixed => $coordinator->runQueued((string)$req['uuid']));
        $ret = $result?->outcome->value;
    } catch (Throwable $e) {
        $error = get_class($e) . ': ' . $e->getMessage();
    }
    return ['ret' => $ret, 'error' => $error, 'sent' => $bus?->sent ?? []] + dump($stack['conn']);
}

function handle(array $req): array
{
    global $handlers;
    try {
        $handler = $handlers[$req['op']] ?? throw new InvalidArgumentException('unknown op ' . $req['op']);
        return ['ok' => true] + $handler($req);
    } catch (Throwable $e) {
        return ['ok' => false, 'error' => get_class($e) . ': ' . $e->getMessage(), 'where' => $e->getFile() . ':' . $e->getLine()];
    }
}

$handlers = [
    'connect' => 'connect', 'schema' => 'schema', 'setup' => 'setup', 'call' => 'call',
    'classify' => 'classify', 'resolve' => 'resolve', 'reap' => 'reap', 'recover' => 'recover',
    'run_queued' => 'runQueued',
    'dump' => static fn(array $req): array => dump(stack($req)['conn']),
    'ping' => static fn(array $req): array => ['pong' => true, 'php' => PHP_VERSION],
];

while (($line = fgets(STDIN)) !== false) {
    $line = trim($line);
    if ($line === '') {
        continue;
    }
    $nested = [];
    try {
        $answer = handle(json_decode($line, true, 512, JSON_THROW_ON_ERROR));
    } catch (Throwable $e) {
        $answer = ['ok' => false, 'error' => get_class($e) . ': ' . $e->getMessage(), 'where' => $e->getFile() . ':' . $e->getLine()];
    }
    if ($nested !== []) {
        $answer['nested'] = $nested;
    }
    fwrite(STDOUT, json_encode($answer, JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n");
    fflush(STDOUT);
}
