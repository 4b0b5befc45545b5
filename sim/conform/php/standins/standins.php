<?php

/*
 * leaselab's minimal stand-ins for what the runtime's classes import from outside the
 * extension: TYPO3 core marker interfaces, Symfony Messenger, PSR-18, nr-vault's envelope
 * codec, Symfony Uid. Our own code, kept to the signatures the runtime calls. The clock
 * functions at the end shadow time() inside the runtime's namespaces (PHP resolves an
 * unqualified function call in the current namespace first), so the harness controls the
 * clock without touching the runtime's files; gethostname() and getmypid() are shadowed the
 * same way in the agent namespace, so a replay names its worker identities.
 */

declare(strict_types=1);

namespace TYPO3\CMS\Core {
    interface SingletonInterface {}
}

namespace Symfony\Component\Messenger\Stamp {
    interface StampInterface {}

    final class DelayStamp implements StampInterface
    {
        public function __construct(private int $delay) {}

        public function getDelay(): int
        {
            return $this->delay;
        }
    }
}

namespace Symfony\Component\Messenger\Exception {
    class TransportException extends \RuntimeException {}
}

namespace Symfony\Component\Messenger {
    final class Envelope
    {
        /** @param list<object> $stamps */
        public function __construct(public readonly object $message, public readonly array $stamps = []) {}
    }

    interface MessageBusInterface
    {
        /** @param list<Stamp\StampInterface> $stamps */
        public function dispatch(object $message, array $stamps = []): Envelope;
    }
}

namespace Symfony\Component\Uid {
    final class Uuid
    {
        private function __construct(private string $value) {}

        public static function v4(): self
        {
            $b = random_bytes(16);
            $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
            $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
            return new self(vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4)));
        }

        public function toRfc4122(): string
        {
            return $this->value;
        }
    }
}

namespace Psr\Http\Client {
    interface ClientExceptionInterface extends \Throwable {}

    interface NetworkExceptionInterface extends ClientExceptionInterface {}
}

namespace Netresearch\NrVault\Exception {
    class EncryptionException extends \RuntimeException {}

    class EnvelopeFormatException extends \RuntimeException {}

    class MasterKeyException extends \RuntimeException {}
}

namespace Netresearch\NrVault\Crypto {
    /** nr-vault's envelope codec, reduced to what AgentStateCodec calls: a reversible marker. */
    interface EnvelopeCodecInterface
    {
        public const MARKER = 'nrv1:';

        public function seal(string $plaintext, string $identifier): string;

        public function open(string $sealed, string $identifier): string;
    }
}

namespace LeaselabStandin {
    use Netresearch\NrVault\Crypto\EnvelopeCodecInterface;
    use Netresearch\NrVault\Exception\EnvelopeFormatException;
    use Symfony\Component\Messenger\Envelope;
    use Symfony\Component\Messenger\MessageBusInterface;

    /** Not encryption: base64 behind the marker, so a test can also store an unreadable payload. */
    final class PlainEnvelopeCodec implements EnvelopeCodecInterface
    {
        public function seal(string $plaintext, string $identifier): string
        {
            return self::MARKER . base64_encode($plaintext);
        }

        public function open(string $sealed, string $identifier): string
        {
            $decoded = base64_decode(substr($sealed, strlen(self::MARKER)), true);
            if ($decoded === false) {
                throw new EnvelopeFormatException('not an envelope');
            }
            return $decoded;
        }
    }

    /** A bus that records what was dispatched, or throws (mode 'throw'). */
    final class RecordingBus implements MessageBusInterface
    {
        /** @var list<array{uuid: string, delay: int|null}> */
        public array $sent = [];

        /** @var (\Closure(int): void)|null called with the dispatch's number (1, 2, ...) before it is handled */
        public ?\Closure $onDispatch = null;

        private int $dispatches = 0;

        public function __construct(public string $mode = 'ok') {}

        public function dispatch(object $message, array $stamps = []): Envelope
        {
            ++$this->dispatches;
            if ($this->onDispatch !== null) {
                // The Sync transport: the wake-up's handler runs here, nested in the dispatch.
                ($this->onDispatch)($this->dispatches);
            }
            if ($this->mode === 'throw') {
                throw new \Symfony\Component\Messenger\Exception\TransportException('leaselab: dispatch refused');
            }
            $delay = null;
            foreach ($stamps as $stamp) {
                if ($stamp instanceof \Symfony\Component\Messenger\Stamp\DelayStamp) {
                    $delay = $stamp->getDelay();
                }
            }
            $this->sent[] = ['uuid' => (string)($message->runUuid ?? ''), 'delay' => $delay];
            return new Envelope($message, $stamps);
        }
    }

    final class NetworkException extends \RuntimeException implements \Psr\Http\Client\NetworkExceptionInterface {}

    /** Stand-ins for the runtime's own control-flow exceptions the model names by short class. */
    final class AuditPersistenceFailedException extends \RuntimeException {}

    final class WriteWithoutDurableExecutionException extends \RuntimeException {}

    final class GuardrailViolationException extends \RuntimeException {}

    final class BudgetExceededException extends \RuntimeException {}

    final class DBALException extends \RuntimeException {}

    final class MetadataPrivacyPolicy implements \Netresearch\NrLlm\Service\Privacy\PrivacyPolicyInterface
    {
        public function level(): \Netresearch\NrLlm\Domain\Enum\PrivacyLevel
        {
            return \Netresearch\NrLlm\Domain\Enum\PrivacyLevel::METADATA;
        }

        public function retentionDays(): int
        {
            return 30;
        }

        public function retentionDaysFor(\Netresearch\NrLlm\Domain\Enum\PrivacyDataCategory $category): int
        {
            return 30;
        }

        public function filterContent(?string $content): ?string
        {
            return $content;
        }
    }

    /** The host name and pid ExecutionIdentity reads (null: the real ones). */
    final class Identity
    {
        public static ?string $host = null;

        public static ?int $pid = null;
    }

    final class Clock
    {
        public static ?int $now = null;

        public static function time(): int
        {
            return self::$now ?? \time();
        }
    }
}

namespace Netresearch\NrLlm\Service\Tool {
    function time(): int
    {
        return \LeaselabStandin\Clock::time();
    }
}

namespace Netresearch\NrLlm\Service\Agent {
    function time(): int
    {
        return \LeaselabStandin\Clock::time();
    }

    function gethostname(): string|false
    {
        return \LeaselabStandin\Identity::$host ?? \gethostname();
    }

    function getmypid(): int|false
    {
        return \LeaselabStandin\Identity::$pid ?? \getmypid();
    }
}

namespace Netresearch\NrLlm\Command {
    function time(): int
    {
        return \LeaselabStandin\Clock::time();
    }
}
