"""Which DRA CEL environment compiles a selector: the release and the gates (compile.go's
``Features`` and ``newCompiler``), and whether the apiserver checks a new selector."""

from __future__ import annotations

from dataclasses import dataclass

NEWEST = 37  # the newest Kubernetes minor release this environment follows


@dataclass(frozen=True)
class Dialect:
    """The DRA CEL environment of one Kubernetes release (``newCompiler``), as the scheduler
    uses it by default. The defaults are Kubernetes 1.37's with its default gates.

    List-typed attributes (KEP-5491, ``DRAListTypeAttributes``, alpha since 1.36): in 1.36 the
    gate decides everything — attributes are typed ``dyn`` (so ``exists``/``all`` may range over
    them and a ``dyn`` result is accepted) and list values are converted only with it on, and
    ``includes`` is declared in the stored environment whatever the gate. 1.37 makes the
    stored environment and the conversion independent of the gate (version skew), so only
    ``NewExpressions`` still follows it.
    """

    release: int = NEWEST
    list_types: bool = False  # DRAListTypeAttributes
    consumable_capacity: bool = True  # DRAConsumableCapacity (beta, on, since 1.36)
    new_expressions: bool = False  # NewExpressions: the apiserver checking a new selector

    @property
    def dyn_attributes(self) -> bool:
        """Attribute values are typed ``dyn``, not the unknown type (``any``)."""
        return self.list_types or (self.release >= 37 and not self.new_expressions)

    @property
    def includes(self) -> bool:
        """``<value>.includes(<value>)`` is declared."""
        return self.list_types if self.new_expressions else self.release >= 36

    @property
    def allow_multiple_allocations(self) -> bool:
        """``device.allowMultipleAllocations`` is declared."""
        return self.consumable_capacity or not self.new_expressions

    @property
    def list_values(self) -> bool:
        """Devices' list-typed attributes become CEL lists (else "unsupported attribute
        value": the device matches no selector)."""
        return self.list_types or self.release >= 37

    def as_new_expression(self) -> Dialect:
        """The environment in which the apiserver of this release validates a new selector."""
        return Dialect(self.release, self.list_types, self.consumable_capacity, True)


DEFAULT = Dialect()
