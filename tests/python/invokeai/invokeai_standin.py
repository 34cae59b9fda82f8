"""A stand-in for InvokeAI's node contract (`invokeai.invocation_api`), for
`make test`: the real InvokeAI (torch and all) is loaded in the real-world
tier. It keeps the contract strict where a real InvokeAI would refuse a
node: an invocation type registered twice, a version that is not semver,
an output built with a field it does not declare or without one it does.
"""

import importlib.util
import logging
import re
import sys
import types

INVOCATIONS = {}
OUTPUTS = {}


class _Unset:
    pass


def InputField(default=_Unset, description="", **_):
    return default


def OutputField(description="", **_):
    return _Unset


def _fields(cls):
    fields = {}
    for klass in reversed(cls.__mro__):
        fields.update(getattr(klass, "__annotations__", {}))
    return fields


class _Model:
    def __init__(self, **values):
        fields = _fields(type(self))
        unknown = set(values) - set(fields)
        if unknown:
            raise TypeError("%s has no field %s" % (type(self).__name__, sorted(unknown)))
        for name in fields:
            if name in values:
                setattr(self, name, values[name])
            elif getattr(type(self), name, _Unset) is _Unset:
                raise TypeError("%s needs %s" % (type(self).__name__, name))


class BaseInvocation(_Model):
    pass


class BaseInvocationOutput(_Model):
    pass


class InvocationContext:
    def __init__(self):
        self.logger = logging.getLogger("InvokeAI")


_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")


def invocation(invocation_type, title=None, tags=None, category=None, version=None,
               use_cache=True, **_):
    def register(cls):
        if invocation_type in INVOCATIONS:
            raise ValueError("invocation type %s is already registered" % invocation_type)
        if version is None or not _SEMVER.match(version):
            raise ValueError("invocation %s needs a semver version" % invocation_type)
        if not issubclass(cls, BaseInvocation) or not callable(getattr(cls, "invoke", None)):
            raise TypeError("%s is not an invocation" % cls.__name__)
        INVOCATIONS[invocation_type] = dict(cls=cls, title=title, tags=tags, category=category,
                                            version=version, use_cache=use_cache)
        return cls

    return register


def invocation_output(output_type):
    def register(cls):
        if not issubclass(cls, BaseInvocationOutput):
            raise TypeError("%s is not an invocation output" % cls.__name__)
        OUTPUTS[output_type] = cls
        return cls

    return register


def install():
    """Puts `invokeai` and `invokeai.invocation_api` into sys.modules."""
    api = types.ModuleType("invokeai.invocation_api")
    for name in ("BaseInvocation", "BaseInvocationOutput", "InputField", "OutputField",
                 "InvocationContext", "invocation", "invocation_output"):
        setattr(api, name, globals()[name])
    package = types.ModuleType("invokeai")
    package.__path__ = []
    package.invocation_api = api
    sys.modules["invokeai"] = package
    sys.modules["invokeai.invocation_api"] = api
    INVOCATIONS.clear()
    OUTPUTS.clear()


def load_node_pack(pack_dir):
    """As InvokeAI's load_custom_nodes: the folder's __init__.py, as a module
    named after the folder."""
    init = pack_dir / "__init__.py"
    spec = importlib.util.spec_from_file_location(init.parent.stem, init.absolute())
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
