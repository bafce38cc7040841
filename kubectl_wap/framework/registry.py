"""The cross-node plugins (those with cycle data) in the default profile's Filter order, after
NodeResourcesFit: VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
PodTopologySpread, InterPodAffinity, then DynamicResources, registered after them
(pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins; upstream's in-tree registry is
pkg/scheduler/framework/plugins/registry.go NewInTreeRegistry).

The one module that names every plugin. As upstream, where a plugin depends on the framework's
interfaces and only the profile (frameworkruntime.NewFramework) reads the registry, a plugin imports
the framework below it (status.py, state.py, volumes.py, plugins/selectors.py) and never this
module, filtering.py or scoring.py, which run the plugins listed here."""

from __future__ import annotations

from typing import Any

from .plugins import (dynamicresources, interpodaffinity, nodevolumelimits, podtopologyspread, volumebinding,
                      volumerestrictions, volumezone)

_CROSS_NODE: list[Any] = [volumerestrictions.PLUGIN, nodevolumelimits.PLUGIN, volumebinding.PLUGIN, volumezone.PLUGIN,
                          podtopologyspread.PLUGIN, interpodaffinity.PLUGIN, dynamicresources.PLUGIN]


def cross_node_plugins() -> list[Any]:
    """The cross-node plugins in Filter order (read it, never change it)."""
    return _CROSS_NODE
