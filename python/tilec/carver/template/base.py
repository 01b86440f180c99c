"""BaseTemplate: what every carver template has (tilelang.carver.template.base)."""

import abc

from ..arch import auto_infer_current_arch


class BaseTemplate(abc.ABC):
    """A template's device (`arch`, by default the current one's description, set with
    with_arch) and the hints it recommends for it."""

    _arch = None

    def with_arch(self, arch):
        """This template, recommending for `arch` (a tilec.carver.arch description)."""
        self._arch = arch
        return self

    def has_arch(self):
        return self._arch is not None

    @property
    def arch(self):
        if self._arch is None:
            self._arch = auto_infer_current_arch()
        return self._arch

    @abc.abstractmethod
    def get_hardware_aware_configs(self, arch=None, topk=10):
        """The best `topk` hints for `arch`, best first."""

    @abc.abstractmethod
    def equivalent_function(self):
        """A tilec @T.prim_func computing what the template describes."""

    def recommend_hints(self, topk=10):
        """The best `topk` hints for this template's device, best first."""
        return self.get_hardware_aware_configs(self.arch, topk)


__all__ = ["BaseTemplate"]
