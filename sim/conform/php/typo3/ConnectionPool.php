<?php

declare(strict_types=1);

namespace TYPO3\CMS\Core\Database;

/**
 * leaselab's stand-in for TYPO3\CMS\Core\Database\ConnectionPool (own code, not TYPO3's).
 *
 * One connection for every table (TYPO3's default: every table maps to the 'Default'
 * connection unless TableMapping says otherwise; the runtime's two tables are never mapped).
 * Differences from TYPO3 13: no TableMapping, no lazy per-name connection registry, no
 * driver middlewares, no TYPO3_CONF_VARS; the connection is handed in by the harness.
 * See DIFFERENCES.md.
 */
class ConnectionPool
{
    public const DEFAULT_CONNECTION_NAME = 'Default';

    public function __construct(private Connection $connection) {}

    public function getConnectionForTable(string $tableName): Connection
    {
        return $this->connection;
    }

    public function getConnectionByName(string $connectionName): Connection
    {
        return $this->connection;
    }

    public function getQueryBuilderForTable(string $tableName): Query\QueryBuilder
    {
        return $this->connection->createQueryBuilder();
    }
}
