"""Generator plugins: one per direction and kernel family, listed explicitly and checked at registration.

As in pluggy, the contract (``GeneratorPlugin``) is apart from the implementations (``PLUGINS``), and
``PluginRegistry.register`` checks a plugin completely before it changes any state: a malformed plugin, a
taken name, a (direction, family) pair served twice or a missing template raises ``PluginValidationError``
naming the plugin. Nothing is discovered from the environment (no entry points): the table below is the list.
Each plugin names its Jinja2 template (datamodel-code-generator's ``TEMPLATE_FILE_PATH`` habit).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from generators.config import DepthwiseConfig, KernelConfig
from generators.enums import Direction, Family

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


class PluginValidationError(ValueError):
    """A plugin refused at registration; the message names the plugin and what is wrong."""


class GeneratorPlugin(BaseModel):
    """What a generator plugin declares: which configurations it renders, and with which template."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    direction: Direction
    family: Family
    config_type: Literal["KernelConfig", "DepthwiseConfig"]
    template: str
    description: str

    def handles(self, config: KernelConfig | DepthwiseConfig) -> bool:
        return (
            type(config).__name__ == self.config_type
            and config.direction is self.direction
            and config.family is self.family
        )


PLUGINS: tuple[Mapping[str, str], ...] = (
    dict(
        name="implicit_gemm_fwd",
        direction="fwd",
        family="implicit_gemm",
        config_type="KernelConfig",
        template="implicit_gemm_instance.hpp.j2",
        description="implicit-GEMM forward (regular, split image, merged groups, explicit GEMM)",
    ),
    dict(
        name="implicit_gemm_bwd_data",
        direction="bwd_data",
        family="implicit_gemm",
        config_type="KernelConfig",
        template="implicit_gemm_instance.hpp.j2",
        description="implicit-GEMM backward data",
    ),
    dict(
        name="implicit_gemm_bwd_weight",
        direction="bwd_weight",
        family="implicit_gemm",
        config_type="KernelConfig",
        template="implicit_gemm_instance.hpp.j2",
        description="implicit-GEMM backward weight (regular, two-stage, merged groups, explicit GEMM)",
    ),
    dict(
        name="streamk_bwd_weight",
        direction="bwd_weight",
        family="streamk",
        config_type="KernelConfig",
        template="implicit_gemm_instance.hpp.j2",
        description="stream-K backward weight (the implicit-GEMM template with kStreamK)",
    ),
    dict(
        name="depthwise_fwd",
        direction="fwd",
        family="depthwise",
        config_type="DepthwiseConfig",
        template="depthwise_instance.hpp.j2",
        description="depthwise forward, 2D and 3D NGCHW",
    ),
    dict(
        name="depthwise_bwd_data",
        direction="bwd_data",
        family="depthwise",
        config_type="DepthwiseConfig",
        template="depthwise_instance.hpp.j2",
        description="depthwise backward data, 2D and 3D NGCHW (direct, stride phases)",
    ),
    dict(
        name="depthwise_bwd_weight",
        direction="bwd_weight",
        family="depthwise",
        config_type="DepthwiseConfig",
        template="depthwise_instance.hpp.j2",
        description="depthwise backward weight, 2D and 3D NGCHW (direct, deterministic two-pass reduction)",
    ),
)


class PluginRegistry:
    """The registered plugins; ``register`` validates before it mutates."""

    def __init__(self, template_dir: Path = TEMPLATE_DIR) -> None:
        self._template_dir = template_dir
        self._plugins: dict[str, GeneratorPlugin] = {}

    @property
    def plugins(self) -> tuple[GeneratorPlugin, ...]:
        return tuple(self._plugins.values())

    def register(self, spec: GeneratorPlugin | Mapping[str, Any]) -> GeneratorPlugin:
        plugin = self._checked(spec)
        self._plugins[plugin.name] = plugin
        return plugin

    def _checked(self, spec: GeneratorPlugin | Mapping[str, Any]) -> GeneratorPlugin:
        label = spec.name if isinstance(spec, GeneratorPlugin) else str(dict(spec).get("name", "<unnamed>"))
        if isinstance(spec, GeneratorPlugin):
            plugin = spec
        else:
            try:
                plugin = GeneratorPlugin.model_validate(dict(spec))
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise PluginValidationError(f"plugin {label!r}: {where}: {first['msg']}") from None
        if plugin.name in self._plugins:
            raise PluginValidationError(f"plugin {label!r}: the name is already registered")
        for other in self._plugins.values():
            if (other.direction, other.family) == (plugin.direction, plugin.family):
                raise PluginValidationError(
                    f"plugin {label!r}: {plugin.direction.value}/{plugin.family.value} is already served by "
                    f"plugin {other.name!r}"
                )
        if not plugin.template.endswith(".j2") or not (self._template_dir / plugin.template).is_file():
            raise PluginValidationError(
                f"plugin {label!r}: template {plugin.template!r} not found under {self._template_dir}"
            )
        return plugin

    def for_config(self, config: KernelConfig | DepthwiseConfig) -> GeneratorPlugin:
        """The one plugin that renders ``config``; ValueError if none does."""
        for plugin in self._plugins.values():
            if plugin.handles(config):
                return plugin
        raise ValueError(
            f"no generator plugin for {config.direction.value}/{config.family.value} ({config.name}); "
            f"registered: {', '.join(self._plugins)}"
        )


def default_registry() -> PluginRegistry:
    """A fresh registry holding every plugin of ``PLUGINS``."""
    registry = PluginRegistry()
    for spec in PLUGINS:
        registry.register(spec)
    return registry
