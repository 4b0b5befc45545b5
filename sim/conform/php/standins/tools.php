<?php

/* leaselab's test tools for the resolver check (own code): one declares an effect, one does not. */

declare(strict_types=1);

namespace LeaselabStandin;

use Netresearch\NrLlm\Domain\Enum\ToolEffect;
use Netresearch\NrLlm\Domain\ValueObject\ToolSpec;
use Netresearch\NrLlm\Service\Tool\ToolEffectInterface;
use Netresearch\NrLlm\Service\Tool\ToolExecutionContext;
use Netresearch\NrLlm\Service\Tool\ToolInterface;
use Netresearch\NrLlm\Domain\ValueObject\ToolResult;

class UndeclaredTool implements ToolInterface
{
    public function __construct(private string $name) {}

    public function getSpec(): ToolSpec
    {
        return new ToolSpec($this->name, 'leaselab test tool', ['type' => 'object', 'properties' => []]);
    }

    public function execute(array $arguments, ToolExecutionContext $context): ToolResult
    {
        throw new \LogicException('leaselab test tools never execute');
    }

    public function isEnabledByDefault(): bool
    {
        return true;
    }

    public function requiresAdmin(): bool
    {
        return false;
    }

    public function getGroup(): string
    {
        return 'leaselab';
    }
}

final class DeclaredTool extends UndeclaredTool implements ToolEffectInterface
{
    public function __construct(string $name, private ToolEffect $effect)
    {
        parent::__construct($name);
    }

    public function getEffect(): ToolEffect
    {
        return $this->effect;
    }
}
