"""A small, dependency-free implementation of the dprepro worker protocol.

The protocol (docs/worker-protocol.md in the dprepro repository) is JSON
lines over stdin/stdout: the harness sends a hello, the worker answers
with its own, then every line is a call that gets exactly one reply. The
harness closes stdin when it is done; the worker then exits.

A method module calls ``serve`` with the extension point it serves, the
form of the privacy guarantees it claims, and one function per operation:

    serve("learner", "pure", {"fit": fit}, version="my-method 1.0")

Each function receives the call's ``params`` (a dict), ``seed`` (an int
below 2**53: seed every random draw with it and the method replays
bit-identically), ``data`` (role -> path of a .npy file the harness wrote)
and ``weights`` (a list of row counts, or None); it returns
``(output, privacy)``, two dicts. An exception becomes an "error" reply:
that call's unit fails with the message, and the worker keeps serving. So
does a result that JSON cannot carry (NaN or infinity, which the protocol
refuses, or a value json cannot encode): the reply is an error saying so,
not a dead worker.

A method with parameters a spec may set (``[methods.params]``) declares
them with ``params``, a list of ``{"name", "type", "default", "doc"}``
dicts (type "float", "int", "bool" or "string"; doc optional) or of
``(name, type, default, doc)`` tuples; they go to the hello's
``attributes["params"]``:

    serve("learner", "approx", {"fit": fit},
          params=[("steps", "int", 50, "gradient steps")])

Each function then finds every declared parameter's value (the spec's, or
the default) in ``params["method_params"]``, e.g.
``int(params["method_params"]["steps"])``. JSON does not keep 1.0 apart
from 1: convert a value to its type before using it.

Anything the method prints goes to stderr (the run's workers.log), never
into the protocol stream.
"""

import json
import sys
import traceback

PROTOCOL = 1


def serve(serves, privacy, ops, version="", attributes=None, params=None):
    """Serve calls on stdin/stdout until the harness closes stdin."""
    if params:
        attributes = dict(attributes or {})
        attributes["params"] = [p if isinstance(p, dict) else
                                dict(zip(("name", "type", "default", "doc"), p)) for p in params]
    proto = sys.stdout
    sys.stdout = sys.stderr  # keep stray prints out of the protocol stream

    def send(msg):
        proto.write(json.dumps(msg, allow_nan=False) + "\n")
        proto.flush()

    def send_result(rid, output, claim):
        """Send a result, or an error reply if JSON cannot carry it."""
        try:
            line = json.dumps({"type": "result", "id": rid, "output": output, "privacy": claim}, allow_nan=False)
        except (ValueError, TypeError) as exc:  # NaN/Inf (allow_nan=False), a numpy array, ...
            why = str(exc)
            if isinstance(exc, ValueError) and "Out of range float" in why:
                why = "NaN/Inf (JSON has neither)"
            print("dprepro_worker: call %s: output is not valid JSON: %s" % (rid, exc), file=sys.stderr)
            send({"type": "error", "id": rid, "message": "output is not valid JSON: " + why})
            return
        proto.write(line + "\n")
        proto.flush()

    line = sys.stdin.readline()
    if not line:
        return
    hello = json.loads(line)
    if hello.get("type") != "hello":
        raise SystemExit("expected a hello from the harness, got %r" % line[:80])
    reply = {"type": "hello", "protocol": PROTOCOL, "serves": serves, "privacy": privacy}
    if version:
        reply["version"] = version
    if attributes:
        reply["attributes"] = attributes
    send(reply)
    print("dprepro_worker: %s serving %s (%s privacy)%s" % (
        hello.get("method", "?"), serves, privacy, ", " + version if version else ""), file=sys.stderr)

    for line in sys.stdin:
        req = json.loads(line)
        rid = req.get("id")
        op = ops.get(req.get("op"))
        if op is None:
            send({"type": "error", "id": rid, "message": "unknown op %r" % req.get("op")})
            continue
        try:
            output, claim = op(req.get("params") or {}, int(req.get("seed", 0)),
                               req.get("data") or {}, req.get("weights"))
        except Exception as exc:  # the call fails, the worker lives on
            traceback.print_exc(file=sys.stderr)
            send({"type": "error", "id": rid, "message": "%s: %s" % (type(exc).__name__, exc)})
            continue
        send_result(rid, output, claim)
