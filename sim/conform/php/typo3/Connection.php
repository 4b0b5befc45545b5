<?php

declare(strict_types=1);

namespace TYPO3\CMS\Core\Database;

use Doctrine\DBAL\ArrayParameterType;
use Doctrine\DBAL\ParameterType;

/**
 * leaselab's stand-in for TYPO3\CMS\Core\Database\Connection (own code, not TYPO3's).
 *
 * Like TYPO3's it extends Doctrine's Connection and quotes table and column names in
 * insert()/update()/delete() before handing them to DBAL. It adds harness hooks:
 * $lastAffected (the driver's affected-row count of the last write, exactly what the
 * repository sees) and $failNext (make the next statement throw, to test fail-soft paths).
 * A third, $beforeStatement, is called with each statement's SQL before it is sent (insert,
 * update and delete reach it through DBAL's executeStatement): the reproductions hold a
 * statement there (another process's statements run first: a stall, as statement order)
 * or make it throw (a store error).
 * Differences from TYPO3 13 (which runs on DBAL 4): DBAL 3.6 here, so PARAM_* are ints
 * (DBAL 4: enums), executeStatement()/update() return int|string (DBAL 4: int|string too,
 * TYPO3 casts to int); no bulkInsert/select/count helpers, no lastInsertId sequence
 * argument handling for PostgreSQL beyond DBAL's own. See DIFFERENCES.md.
 */
class Connection extends \Doctrine\DBAL\Connection
{
    public const PARAM_NULL = ParameterType::NULL;
    public const PARAM_INT = ParameterType::INTEGER;
    public const PARAM_STR = ParameterType::STRING;
    public const PARAM_LOB = ParameterType::LARGE_OBJECT;
    public const PARAM_BOOL = ParameterType::BOOLEAN;
    public const PARAM_INT_ARRAY = ArrayParameterType::INTEGER;
    public const PARAM_STR_ARRAY = ArrayParameterType::STRING;

    public int $lastAffected = -1;
    public ?string $failNext = null;

    /** @var (\Closure(string): void)|null */
    public ?\Closure $beforeStatement = null;

    private function maybeFail(?string $sql = null): void
    {
        if ($sql !== null && $this->beforeStatement !== null) {
            ($this->beforeStatement)($sql);
        }
        if ($this->failNext !== null) {
            $message = $this->failNext;
            $this->failNext = null;
            throw new \RuntimeException('leaselab: injected store error: ' . $message);
        }
    }

    public function createQueryBuilder()
    {
        return new Query\QueryBuilder($this);
    }

    public function createDoctrineQueryBuilder(): \Doctrine\DBAL\Query\QueryBuilder
    {
        return new \Doctrine\DBAL\Query\QueryBuilder($this);
    }

    /** @param array<string, mixed> $data */
    public function insert($table, array $data, array $types = [])
    {
        $this->maybeFail();
        $affected = (int)parent::insert($this->quoteIdentifier($table), $this->quoteKeys($data), $types);
        $this->lastAffected = $affected;
        return $affected;
    }

    /** @param array<string, mixed> $data @param array<string, mixed> $criteria */
    public function update($table, array $data, array $criteria = [], array $types = [])
    {
        $this->maybeFail();
        $affected = (int)parent::update($this->quoteIdentifier($table), $this->quoteKeys($data), $this->quoteKeys($criteria), $types);
        $this->lastAffected = $affected;
        return $affected;
    }

    /** @param array<string, mixed> $criteria */
    public function delete($table, array $criteria = [], array $types = [])
    {
        $this->maybeFail();
        $affected = (int)parent::delete($this->quoteIdentifier($table), $this->quoteKeys($criteria), $types);
        $this->lastAffected = $affected;
        return $affected;
    }

    public function executeStatement($sql, array $params = [], array $types = [])
    {
        $this->maybeFail((string)$sql);
        $affected = parent::executeStatement($sql, $params, $types);
        $this->lastAffected = (int)$affected;
        return $affected;
    }

    public function executeQuery(string $sql, array $params = [], $types = [], ?\Doctrine\DBAL\Cache\QueryCacheProfile $qcp = null): \Doctrine\DBAL\Result
    {
        $this->maybeFail($sql);
        return parent::executeQuery($sql, $params, $types, $qcp);
    }

    /** @param array<string, mixed> $input @return array<string, mixed> */
    private function quoteKeys(array $input): array
    {
        $out = [];
        foreach ($input as $key => $value) {
            $out[$this->quoteIdentifier((string)$key)] = $value;
        }
        return $out;
    }
}
