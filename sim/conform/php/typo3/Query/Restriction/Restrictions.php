<?php

declare(strict_types=1);

namespace TYPO3\CMS\Core\Database\Query\Restriction;

/**
 * leaselab's stand-in restriction container (own code). TYPO3 adds deleted/hidden/
 * starttime/endtime restrictions from TCA; the runtime's tables have no TCA (and the
 * repository calls removeAll()), so the container is empty and never rendered.
 */
interface QueryRestrictionContainerInterface
{
    public function removeAll(): self;
}

class DefaultRestrictionContainer implements QueryRestrictionContainerInterface
{
    public function removeAll(): self
    {
        return $this;
    }
}
