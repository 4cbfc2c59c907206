"""Rule MV112: a device of a backend the target machine cannot run."""

from __future__ import annotations

from .base import OutcomeRule


class BackendUnavailable(OutcomeRule):
    """A device of a backend that the target machine does not have.

    ## What it does
    With the target's backends configured (`--backends`, later `backends` in the
    configuration), reports device constructors of any other backend
    (`Device.wgpu()` when the target has only `Cpu` and `Flex`, ...). Without a
    configuration every backend counts as available and the rule is silent.

    ## Why it fails
    Constructing a device of a backend the machine cannot run raises
    `Backend <name> is not available on this machine`.

    ## Example
    ```python
    from runtime_shim import Device

    device = Device.wgpu()  # target backends: Flex, NdArray
    ```

    ## Use instead
    ```python
    from runtime_shim import Device

    device = Device.flex()  # target backends: Flex, NdArray
    ```

    ## Fix safety
    Unsafe: another backend has other performance and numerical behaviour.
    """

    code = "MV112"
    name = "backend-unavailable"
