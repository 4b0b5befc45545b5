<?php

declare(strict_types=1);

namespace TYPO3\CMS\Core\Database\Query;

use Doctrine\DBAL\Query\QueryBuilder as DoctrineQueryBuilder;
use TYPO3\CMS\Core\Database\Connection;
use TYPO3\CMS\Core\Database\Query\Expression\ExpressionBuilder;
use TYPO3\CMS\Core\Database\Query\Restriction\QueryRestrictionContainerInterface;
use TYPO3\CMS\Core\Database\Query\Restriction\DefaultRestrictionContainer;

/**
 * leaselab's stand-in for TYPO3\CMS\Core\Database\Query\QueryBuilder (own code).
 *
 * Like TYPO3's it wraps (does not extend) Doctrine's QueryBuilder, quotes identifiers in
 * select/from/update/set/orderBy/groupBy/count, turns set() values into named parameters
 * unless told not to, and exposes the restriction container. Only the methods the runtime
 * uses exist. Differences from TYPO3 13: restrictions are never applied (the runtime's
 * tables have no TCA, so TYPO3 would add none either, and the repository calls removeAll()
 * anyway); no quoting of "table.field" dotted names beyond DBAL's quoteIdentifier (which
 * handles dots); no 'AS' alias parsing in select(); DBAL 3.6 semantics (DBAL 4 removed
 * the $type int constants in favour of enums). See DIFFERENCES.md.
 */
class QueryBuilder
{
    private DoctrineQueryBuilder $concrete;
    private QueryRestrictionContainerInterface $restrictions;

    public function __construct(private Connection $connection)
    {
        $this->concrete = $connection->createDoctrineQueryBuilder();
        $this->restrictions = new DefaultRestrictionContainer();
    }

    public function expr(): ExpressionBuilder
    {
        return new ExpressionBuilder($this->connection);
    }

    public function getRestrictions(): QueryRestrictionContainerInterface
    {
        return $this->restrictions;
    }

    public function createNamedParameter(mixed $value, int $type = Connection::PARAM_STR, ?string $placeHolder = null): string
    {
        return $this->concrete->createNamedParameter($value, $type, $placeHolder);
    }

    public function select(string ...$selects): self
    {
        $this->concrete->select(...array_map(fn(string $s): string => $s === '*' ? $s : $this->connection->quoteIdentifier($s), $selects));
        return $this;
    }

    public function selectLiteral(string ...$selects): self
    {
        $this->concrete->select(...$selects);
        return $this;
    }

    public function addSelectLiteral(string ...$selects): self
    {
        $this->concrete->addSelect(...$selects);
        return $this;
    }

    public function count(string $item): self
    {
        $field = $item === '*' ? $item : $this->connection->quoteIdentifier($item);
        $this->concrete->select('COUNT(' . $field . ')');
        return $this;
    }

    public function from(string $from, ?string $alias = null): self
    {
        $this->concrete->from($this->connection->quoteIdentifier($from), $alias === null ? null : $this->connection->quoteIdentifier($alias));
        return $this;
    }

    public function update(string $update, ?string $alias = null): self
    {
        $this->concrete->update($this->connection->quoteIdentifier($update), $alias === null ? null : $this->connection->quoteIdentifier($alias));
        return $this;
    }

    public function delete(string $delete, ?string $alias = null): self
    {
        $this->concrete->delete($this->connection->quoteIdentifier($delete), $alias === null ? null : $this->connection->quoteIdentifier($alias));
        return $this;
    }

    public function set(string $key, mixed $value, bool $createNamedParameter = true, int $type = Connection::PARAM_STR): self
    {
        $this->concrete->set(
            $this->connection->quoteIdentifier($key),
            $createNamedParameter ? $this->createNamedParameter($value, $type) : (string)$value,
        );
        return $this;
    }

    public function where(mixed ...$predicates): self
    {
        $this->concrete->where(...$predicates);
        return $this;
    }

    public function andWhere(mixed ...$predicates): self
    {
        $this->concrete->andWhere(...$predicates);
        return $this;
    }

    public function orderBy(string $fieldName, ?string $order = null): self
    {
        $this->concrete->orderBy($this->connection->quoteIdentifier($fieldName), $order);
        return $this;
    }

    public function addOrderBy(string $fieldName, ?string $order = null): self
    {
        $this->concrete->addOrderBy($this->connection->quoteIdentifier($fieldName), $order);
        return $this;
    }

    public function groupBy(string ...$groupBy): self
    {
        $this->concrete->groupBy(...array_map(fn(string $g): string => $this->connection->quoteIdentifier($g), $groupBy));
        return $this;
    }

    public function setMaxResults(?int $maxResults = null): self
    {
        $this->concrete->setMaxResults($maxResults);
        return $this;
    }

    public function getSQL(): string
    {
        return $this->concrete->getSQL();
    }

    public function executeQuery(): \Doctrine\DBAL\Result
    {
        return $this->connection->executeQuery($this->concrete->getSQL(), $this->concrete->getParameters(), $this->concrete->getParameterTypes());
    }

    public function executeStatement(): int
    {
        return (int)$this->connection->executeStatement($this->concrete->getSQL(), $this->concrete->getParameters(), $this->concrete->getParameterTypes());
    }
}
