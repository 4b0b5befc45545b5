<?php

declare(strict_types=1);

namespace TYPO3\CMS\Core\Database\Query\Expression;

use TYPO3\CMS\Core\Database\Connection;

/**
 * leaselab's stand-in for TYPO3's ExpressionBuilder (own code): the comparisons the
 * runtime uses, each quoting the field name and taking the value verbatim (a placeholder
 * from createNamedParameter). in() takes a placeholder that DBAL expands for array
 * parameter types, or a literal list. Differences from TYPO3 13: no inSet/like/bitAnd,
 * and()/or() return plain strings. See DIFFERENCES.md.
 */
class ExpressionBuilder
{
    public const EQ = '=';
    public const NEQ = '<>';
    public const LT = '<';
    public const LTE = '<=';
    public const GT = '>';
    public const GTE = '>=';

    public function __construct(private Connection $connection) {}

    public function comparison(string $leftExpression, string $operator, string $rightExpression): string
    {
        return $leftExpression . ' ' . $operator . ' ' . $rightExpression;
    }

    public function eq(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::EQ, (string)$value);
    }

    public function neq(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::NEQ, (string)$value);
    }

    public function lt(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::LT, (string)$value);
    }

    public function lte(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::LTE, (string)$value);
    }

    public function gt(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::GT, (string)$value);
    }

    public function gte(string $fieldName, mixed $value): string
    {
        return $this->comparison($this->connection->quoteIdentifier($fieldName), self::GTE, (string)$value);
    }

    public function in(string $fieldName, string|array $value): string
    {
        return $this->comparison(
            $this->connection->quoteIdentifier($fieldName),
            'IN',
            '(' . (is_array($value) ? implode(', ', $value) : $value) . ')',
        );
    }

    public function and(string ...$expressions): string
    {
        return '(' . implode(') AND (', $expressions) . ')';
    }

    public function or(string ...$expressions): string
    {
        return '(' . implode(') OR (', $expressions) . ')';
    }
}
