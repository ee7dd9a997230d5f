"""dprepro's worker protocol (version 1) in Python: a method in ~10 lines.

The protocol (docs/worker-protocol.md in the dprepro repository) is JSON
lines over stdin/stdout: the harness sends a hello, the worker answers with
its own, then every line is a call that gets exactly one reply. The
harness closes stdin when it is done; the worker then exits.

A method declares what it serves, the form of the privacy guarantees it
claims, its parameters and diagnostics, and one function per operation::

    from dprepro.worker import Method, Param, pure

    method = Method("learner", "pure", version="my-method 1",
                    params=[Param("scale", "float", 1.0, "noise scale")])

    @method.op("fit")
    def fit(call):
        X, y = call.x, call.y            # the .npy files the harness wrote
        w = ...                          # draw noise with call.rng only
        return {"weights": w}, pure(call.params["epsilon"])

    if __name__ == "__main__":
        method.serve()

An operation receives a :class:`Call` and returns ``(output, privacy)``:
the operation's output (numpy arrays and scalars are converted) and the
guarantee claimed for this call (:func:`pure`, :func:`approx`,
:func:`zcdp`, :func:`subsampled_gaussian` — a mechanism whose epsilon the
harness computes — or None for a call that releases nothing private). An
exception becomes an "error" reply: that call's unit fails with the
message ``"<ExceptionType>: <message>"``, and the worker keeps serving. So
does a result that JSON cannot carry (NaN or infinity, which the protocol
refuses): the reply is the error "output is not valid JSON: NaN/Inf (JSON
has neither)", not a dead worker.

Anything the method prints goes to stderr (the run's workers.log), never
into the protocol stream. numpy is imported only when a call loads data
or draws from ``call.rng``.
"""

import functools
import json
import re
import sys
import traceback

PROTOCOL = 1

SERVES = ("learner", "ci", "hypothesis")
PRIVACY = ("pure", "approx", "zcdp")
PARAM_TYPES = ("float", "int", "bool", "string")
_PYTHON_TYPES = {float: "float", int: "int", bool: "bool", str: "string"}
_PARAM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}\Z")
_DIAG_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
MAX_DIAGNOSTICS = 16
CACHE_PATHS = 8


def pure(epsilon):
    """The claim of a pure epsilon-DP release: ``{"epsilon": epsilon}``."""
    return {"epsilon": float(epsilon)}


def approx(epsilon, delta):
    """The claim of an (epsilon, delta)-DP release."""
    return {"epsilon": float(epsilon), "delta": float(delta)}


def zcdp(rho):
    """The claim of a rho-zCDP release (Bun & Steinke 2016)."""
    return {"rho": float(rho)}


def subsampled_gaussian(noise_multiplier, sampling_rate, steps, epsilon=None, delta=None):
    """The claim of a release whose (epsilon, delta) the harness computes:
    `steps` steps of the Poisson-subsampled Gaussian mechanism (DP-SGD;
    sampling_rate 1 for full-batch DP-GD) with noise standard deviation
    noise_multiplier times the L2 sensitivity of each step's sum. The
    harness's accountants (privacy-loss distributions, and RDP after
    Mironov, Talwar & Zhang 2019; the smaller bound is booked) give its
    epsilon at delta (the level's when None): at sampling_rate 1 the
    Gaussian mechanism's, under replace-one adjacency when the multiplier
    is against the replace-one sensitivity (2C/n for an average of
    gradients clipped to C); below 1 the add-or-remove-one guarantee
    Opacus and TF-Privacy report. epsilon, if given, is the method's own
    figure, which the harness sets beside the computed one and warns
    about when it is smaller. Only a method declared with privacy "approx" and
    attributes={"mechanism": "subsampled-gaussian"} may claim it."""
    claim = {"mechanism": {"name": "subsampled-gaussian", "noise_multiplier": float(noise_multiplier),
                           "sampling_rate": float(sampling_rate), "steps": int(steps)}}
    if epsilon is not None:
        claim["epsilon"] = float(epsilon)
    if delta is not None:
        claim["delta"] = float(delta)
    return claim


@functools.lru_cache(maxsize=CACHE_PATHS)
def load_npy(path):
    """Read a .npy file the harness wrote, keeping the last 8 paths read.

    The harness never rewrites a path, so caching by path is safe; a long
    run hands a worker many paths, so the cache is bounded. The array is
    read-only: every call shares it. A worker must not reopen a path after
    the call that named it returned (the harness may have removed it)."""
    import numpy as np

    a = np.load(path, allow_pickle=False)
    a.setflags(write=False)
    return a


class Param:
    """A parameter a spec may set in ``[methods.params]``.

    type is "float", "int", "bool" or "string" (or the Python type float,
    int, bool, str); default must be of that type; doc is optional. The
    name is a letter, then letters, digits or ``_`` (at most 32 bytes)."""

    __slots__ = ("name", "type", "default", "doc")

    def __init__(self, name, type, default, doc=""):
        type = _PYTHON_TYPES.get(type, type)
        if not isinstance(name, str) or not _PARAM_NAME.match(name):
            raise ValueError("parameter name %r: want a letter, then letters, digits or _ (at most 32)" % (name,))
        if type not in PARAM_TYPES:
            raise ValueError("parameter %s: type %r is not one of %s" % (name, type, ", ".join(PARAM_TYPES)))
        try:
            ok = convert(type, default) == default and (type != "int" or not isinstance(default, bool))
        except (TypeError, ValueError):
            ok = False
        if not ok or (type == "float" and isinstance(default, bool)):
            raise ValueError("parameter %s: default %r is not a %s" % (name, default, type))
        self.name, self.type, self.default, self.doc = name, type, convert(type, default), doc or ""

    def declaration(self):
        """The parameter as the hello's ``attributes["params"]`` lists it."""
        d = {"name": self.name, "type": self.type, "default": self.default}
        if self.doc:
            d["doc"] = self.doc
        return d

    def __repr__(self):
        return "Param(%r, %r, %r, %r)" % (self.name, self.type, self.default, self.doc)


def convert(type, value):
    """value as a parameter of type "float", "int", "bool" or "string".

    JSON does not keep 1.0 apart from 1, so an int arrives as 1 or 1.0 and
    a float as 1: both are converted; a value that is not of the type
    (2.5 for an int, "x" for a float, 1 for a bool) raises ValueError."""
    if type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("%r is not a number" % (value,))
        return float(value)
    if type == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ValueError("%r is not an integer" % (value,))
        return int(value)
    if type == "bool":
        if not isinstance(value, bool):
            raise ValueError("%r is not true or false" % (value,))
        return value
    if type == "string":
        if not isinstance(value, str):
            raise ValueError("%r is not a string" % (value,))
        return value
    raise ValueError("unknown parameter type %r" % (type,))


class Call:
    """One call of the harness: what an operation function receives.

    Attributes: ``op``; ``id`` (the call's number, from 1); ``seed`` (an
    int below 2**53: seed every random draw with it, e.g. through
    :attr:`rng`, and the method replays bit-identically); ``params`` (the
    call's params, a dict); ``paths`` (role -> path of a .npy file);
    ``weights`` (row counts over the data's rows as a float64 array, or
    None); ``method_params`` (every declared parameter's value converted
    to its type: the spec's, else the default)."""

    def __init__(self, op, params=None, seed=0, data=None, weights=None, id=0, declared=()):
        self.op = op
        self.id = id
        self.seed = int(seed)
        self.params = params or {}
        self.paths = data or {}
        self.raw_weights = weights
        self.weights = None
        if weights is not None:
            import numpy as np

            self.weights = np.asarray(weights, dtype=np.float64)
        given = self.params.get("method_params") or {}
        mp = {}
        for p in declared:
            try:
                mp[p.name] = convert(p.type, given.get(p.name, p.default))
            except ValueError as exc:
                raise ValueError("method_params.%s: %s (declared %s)" % (p.name, exc, p.type)) from None
        self.method_params = mp
        self._rng = None

    def data(self, role):
        """The array the harness wrote for role ("x", "y"), read-only and
        cached by path (:func:`load_npy`)."""
        if role not in self.paths:
            raise LookupError("the call has no data %r (it has: %s)" % (role, ", ".join(sorted(self.paths)) or "none"))
        return load_npy(self.paths[role])

    @property
    def x(self):
        """The rows, ``data("x")``."""
        return self.data("x")

    @property
    def y(self):
        """The labels or targets, ``data("y")``."""
        return self.data("y")

    @property
    def rng(self):
        """numpy's default generator (PCG64) seeded by the call's seed,
        created on first use."""
        if self._rng is None:
            import numpy as np

            self._rng = np.random.default_rng(self.seed)
        return self._rng

    def __repr__(self):
        return "Call(op=%r, id=%r, seed=%r)" % (self.op, self.id, self.seed)


def _jsonable(o):
    """json.dumps's default: numpy arrays and scalars as lists and numbers."""
    tolist = getattr(o, "tolist", None)
    if tolist is not None:  # numpy ndarray or scalar
        return tolist()
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


class Method:
    """A method served through dprepro's worker protocol.

    serves is "learner", "ci" or "hypothesis"; privacy the form of every
    guarantee the method claims: "pure" (epsilon-DP), "approx" ((epsilon,
    delta)-DP) or "zcdp" (rho-zCDP). version (optional) is recorded in the
    run's manifest. params are :class:`Param` values or (name, type,
    default[, doc]) tuples or dicts; diagnostics the names a learner's fit
    reports (missing ones are sent as null). attributes holds what the
    extension point asks of the method (a ci method's "model" and "spends",
    a hypothesis generator's "tasks"). name (optional) names the method in
    its log lines. A malformed declaration raises ValueError at once."""

    def __init__(self, serves, privacy, version="", params=(), diagnostics=(), attributes=None, name=""):
        if serves not in SERVES:
            raise ValueError("serves %r is not one of %s" % (serves, ", ".join(SERVES)))
        if privacy not in PRIVACY:
            raise ValueError("privacy %r is not one of %s" % (privacy, ", ".join(PRIVACY)))
        self.serves, self.privacy, self.version, self.name = serves, privacy, version or "", name or ""
        self.params = []
        for p in params or ():
            if isinstance(p, Param):
                pass
            elif isinstance(p, dict):
                p = Param(p.get("name"), p.get("type"), p.get("default"), p.get("doc", ""))
            else:
                p = Param(*p)
            if any(q.name == p.name for q in self.params):
                raise ValueError("parameter %s declared twice" % p.name)
            self.params.append(p)
        self.diagnostics = list(diagnostics or ())
        if self.diagnostics and serves != "learner":
            raise ValueError("diagnostics are reported by learners only (serves %r)" % serves)
        if len(self.diagnostics) > MAX_DIAGNOSTICS:
            raise ValueError("%d diagnostics: at most %d" % (len(self.diagnostics), MAX_DIAGNOSTICS))
        for d in self.diagnostics:
            if not isinstance(d, str) or not _DIAG_NAME.match(d):
                raise ValueError("diagnostic %r: want a lower-case letter, then up to 31 of a-z, 0-9, _" % (d,))
        if len(set(self.diagnostics)) != len(self.diagnostics):
            raise ValueError("a diagnostic is declared twice: %r" % (self.diagnostics,))
        self.attributes = dict(attributes or {})
        self.ops = {}
        self._auto_stability = True

    def op(self, name, func=None):
        """Register func as operation name ("fit", "stability", "interval",
        "estimate", "sequence", "independent"); usable as a decorator."""
        if func is None:
            return lambda f: self.op(name, f)
        self.ops[name] = func
        return func

    def hello(self):
        """The worker's hello reply."""
        reply = {"type": "hello", "protocol": PROTOCOL, "serves": self.serves, "privacy": self.privacy}
        if self.version:
            reply["version"] = self.version
        attributes = dict(self.attributes)
        if self.serves == "learner" and "stability" in self.ops and self._auto_stability:
            attributes.setdefault("stability", True)
        if self.diagnostics:
            attributes["diagnostics"] = list(self.diagnostics)
        if self.params:
            attributes["params"] = [p.declaration() for p in self.params]
        if attributes:
            reply["attributes"] = attributes
        return reply

    def call(self, op, params=None, seed=0, data=None, weights=None, id=0):
        """Run operation op as a call of the harness would, returning
        (output, privacy) or raising: for tests and notebooks."""
        func = self.ops.get(op)
        if func is None:
            raise LookupError("unknown op %r (this method has: %s)" % (op, ", ".join(sorted(self.ops))))
        c = Call(op, params, seed, data, weights, id, self.params)
        output, claim = func(c)
        if op == "fit" and self.diagnostics and isinstance(output, dict):
            diag = output.get("diagnostics")
            diag = dict(diag) if isinstance(diag, dict) else {}
            for name in self.diagnostics:
                diag.setdefault(name, None)
            output = dict(output, diagnostics=diag)
        return output, claim

    def serve(self, stdin=None, stdout=None, log=None):
        """Serve calls on stdin/stdout until the harness closes stdin.

        stdin, stdout and log (the log lines, stderr by default) are for
        tests; when stdout is the process's, print goes to stderr."""
        _serve(self.hello(), self._reply, stdin, stdout, log, self.name)

    def _reply(self, req):
        if req.get("op") not in self.ops:
            raise _UnknownOp("unknown op %r" % (req.get("op"),))
        return self.call(req.get("op"), req.get("params"), req.get("seed", 0), req.get("data"),
                         req.get("weights"), req.get("id"))


class _UnknownOp(Exception):
    pass


def _serve(hello_reply, answer, stdin, stdout, log, name=""):
    stdin = stdin or sys.stdin
    proto = stdout or sys.stdout
    log = log or sys.stderr
    if stdout is None:
        sys.stdout = sys.stderr  # keep stray prints out of the protocol stream

    def send(msg):
        proto.write(json.dumps(msg, allow_nan=False) + "\n")
        proto.flush()

    def send_result(rid, output, claim):
        """Send a result, or an error reply if JSON cannot carry it."""
        try:
            line = json.dumps({"type": "result", "id": rid, "output": output, "privacy": claim},
                              allow_nan=False, default=_jsonable)
        except (ValueError, TypeError) as exc:  # NaN/Inf (allow_nan=False), an object json cannot encode
            why = str(exc)
            if isinstance(exc, ValueError) and "Out of range float" in why:
                why = "NaN/Inf (JSON has neither)"
            print("dprepro.worker: call %s: output is not valid JSON: %s" % (rid, exc), file=log)
            send({"type": "error", "id": rid, "message": "output is not valid JSON: " + why})
            return
        proto.write(line + "\n")
        proto.flush()

    line = stdin.readline()
    if not line:
        return
    try:
        hello = json.loads(line)
    except ValueError:
        hello = None
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        raise SystemExit("dprepro.worker: expected a hello from the harness, got %r" % line[:80])
    if hello.get("protocol") != PROTOCOL:
        print("dprepro.worker: the harness speaks protocol %r, this worker %d" % (hello.get("protocol"), PROTOCOL),
              file=log)
    send(hello_reply)
    version = hello_reply.get("version", "")
    print("dprepro.worker: %s serving %s (%s privacy)%s" % (
        hello.get("method") or name or "?", hello_reply["serves"], hello_reply["privacy"],
        ", " + version if version else ""), file=log)

    for line in stdin:
        try:
            req = json.loads(line)
        except ValueError:
            raise SystemExit("dprepro.worker: the harness sent a line that is not JSON: %r" % line[:80])
        rid = req.get("id")
        try:
            output, claim = answer(req)
        except _UnknownOp as exc:
            send({"type": "error", "id": rid, "message": str(exc)})
            continue
        except Exception as exc:  # the call fails, the worker lives on
            traceback.print_exc(file=log)
            send({"type": "error", "id": rid, "message": "%s: %s" % (type(exc).__name__, exc)})
            continue
        send_result(rid, output, claim)


def serve(serves, privacy, ops, version="", attributes=None, params=None):
    """Serve functions written for the copied helper dprepro_worker.py.

    ops maps an operation to a function ``f(params, seed, data, weights)``
    returning (output, privacy); params are (name, type, default, doc)
    tuples or dicts. New methods use :class:`Method`."""
    m = Method(serves, privacy, version=version, params=params, attributes=attributes)
    for name, f in ops.items():
        m.op(name, lambda c, f=f: f(c.params, c.seed, c.paths, c.raw_weights))
    m._auto_stability = False  # the hello is the one the helper sent
    m.serve()
