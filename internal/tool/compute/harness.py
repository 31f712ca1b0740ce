# turnstone math harness (embedded in the Go binary, run with `python3 -I -c`).
#
# Protocol: argv[1] is a JSON config, stdin is the user's code (UTF-8), and
# the harness writes one JSON object {"ok": bool, "output": str} to the file
# descriptor named by config["result_fd"]. The harness is trusted; the user
# code is not. The AST validation and the import filter below reproduce the
# original tool's messages, but they are NOT the security boundary: the Go
# side runs this process in a sandbox (no network, no view of $HOME, one
# writable scratch directory) and the resource limits set here bound it.
import ast
import builtins
import json
import os
import re
import resource
import sys
import traceback

BLOCKED_BUILTINS = {
    "open", "exec", "eval", "compile", "input", "breakpoint",
    "memoryview", "globals", "locals", "vars",
}

BLOCKED_MODULES = {
    "os", "sys", "subprocess", "shutil", "pathlib", "socket", "http",
    "urllib", "requests", "pickle", "marshal", "shelve", "dbm", "sqlite3",
    "ctypes", "multiprocessing", "threading", "asyncio", "concurrent",
    "signal", "pty", "tty", "termios", "fcntl", "resource", "syslog",
    "tempfile", "io", "builtins", "__builtin__", "importlib",
}

ALLOWED_DUNDERS = {"__name__", "__doc__", "__class__"}

SYMPY_NAMES = (
    "symbols", "Symbol", "solve", "simplify", "expand", "factor", "Eq",
    "sqrt", "Rational", "pi", "E", "I", "oo", "sin", "cos", "tan", "exp",
    "log", "factorial", "binomial", "gcd", "lcm", "prime", "isprime",
    "factorint", "divisors", "totient", "mod_inverse", "Matrix", "integrate",
    "diff", "limit", "series", "Sum", "Product", "floor", "ceiling", "Abs",
)
NUMPY_NAMES = ("np", "numpy")
SCIPY_NAMES = ("scipy", "special", "optimize", "comb", "perm", "gamma", "beta")

# Names whose presence means "the code may look at the whole namespace", so
# every library is loaded (dir() lists the pre-imported names).
INTROSPECTION_NAMES = {"dir", "help"}

DEBIAN_PACKAGE = {"sympy": "python3-sympy", "numpy": "python3-numpy", "scipy": "python3-scipy"}

CODE_FILENAME = "<code>"


class Validator(ast.NodeVisitor):
    """The original tool's static checks, with its messages."""

    def __init__(self):
        self.errors = []

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name.split(".")[0] in BLOCKED_MODULES:
                self.errors.append(f"Import of '{alias.name}' is not allowed")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.module and node.module.split(".")[0] in BLOCKED_MODULES:
            self.errors.append(f"Import from '{node.module}' is not allowed")
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in BLOCKED_BUILTINS:
            self.errors.append(f"Call to '{node.func.id}' is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        a = node.attr
        if a.startswith("__") and a.endswith("__") and a not in ALLOWED_DUNDERS:
            self.errors.append(f"Access to '{a}' is not allowed")
        self.generic_visit(node)


def parse(code):
    """Returns (tree, errors)."""
    try:
        tree = ast.parse(code, CODE_FILENAME)
    except SyntaxError as e:
        lines = code.split("\n")
        msg = f"Syntax error on line {e.lineno}: {e.msg}"
        if e.lineno and e.lineno <= len(lines):
            msg += f"\n  {e.lineno}: {lines[e.lineno - 1]}"
            if e.offset:
                msg += f"\n      {' ' * (e.offset - 1)}^"
        return None, [msg]
    except (ValueError, UnicodeError) as e:
        return None, [f"Code contains invalid characters: {e}"]
    v = Validator()
    v.visit(tree)
    return tree, v.errors


def auto_print(code, tree):
    """Wraps a trailing expression in print() when the code neither prints
    nor assigns `result`. Done on the AST rather than on source lines, so a
    trailing `x = 1; x` on one line works too."""
    if "print(" in code or re.search(r"\bresult\s*=", code):
        return tree
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return tree
    last = tree.body[-1]
    call = ast.Call(func=ast.Name(id="print", ctx=ast.Load()), args=[last.value], keywords=[])
    last.value = ast.copy_location(call, last.value)
    ast.fix_missing_locations(tree)
    return tree


def referenced_names(tree):
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def set_limits(cfg):
    def lim(kind, soft, hard=None):
        if soft and soft > 0:
            try:
                resource.setrlimit(kind, (soft, hard if hard else soft))
            except (ValueError, OSError):
                pass

    lim(resource.RLIMIT_CORE, 0)
    lim(resource.RLIMIT_CPU, cfg.get("cpu_seconds"), cfg.get("cpu_seconds", 0) + 1)
    lim(resource.RLIMIT_AS, cfg.get("memory_bytes"))
    lim(resource.RLIMIT_NPROC, cfg.get("max_processes"))
    lim(resource.RLIMIT_FSIZE, cfg.get("file_bytes"))
    lim(resource.RLIMIT_NOFILE, 256)


class Capture:
    """stdout replacement that keeps at most `cap` characters, so an endless
    print loop cannot grow the harness without bound."""

    def __init__(self, cap):
        self.parts, self.size, self.cap, self.dropped = [], 0, cap, 0

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        room = self.cap - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def flush(self):
        pass

    def getvalue(self):
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n[output cut: {self.dropped} more characters were printed]"
        return text


def build_namespace(names, missing):
    """The pre-imported names of the original tool. Third-party libraries are
    loaded only when the code refers to one of their names (or introspects),
    which keeps `print(1+1)` fast; the names the code can see are the same."""
    import collections
    import decimal
    import fractions
    import functools
    import itertools
    import math
    import operator
    import random
    import string

    ns = {
        "__builtins__": None,
        "math": math, "fractions": fractions, "Fraction": fractions.Fraction,
        "itertools": itertools, "functools": functools, "operator": operator,
        "collections": collections, "decimal": decimal, "Decimal": decimal.Decimal,
        "random": random, "re": re, "string": string,
    }
    everything = bool(names & INTROSPECTION_NAMES)

    if everything or names & set(SYMPY_NAMES + ("sympy",)):
        try:
            import sympy

            ns["sympy"] = sympy
            for n in SYMPY_NAMES:
                ns[n] = getattr(sympy, n)
        except ImportError:
            missing["sympy"] = SYMPY_NAMES + ("sympy",)

    if everything or names & set(NUMPY_NAMES):
        try:
            import numpy

            ns["np"] = ns["numpy"] = numpy
        except ImportError:
            missing["numpy"] = NUMPY_NAMES

    if everything or names & set(SCIPY_NAMES):
        try:
            import scipy
            import scipy.integrate
            import scipy.linalg
            import scipy.optimize
            import scipy.special

            ns["scipy"] = scipy
            ns["special"] = scipy.special
            ns["optimize"] = scipy.optimize
            ns["comb"] = scipy.special.comb
            ns["perm"] = scipy.special.perm
            ns["gamma"] = scipy.special.gamma
            ns["beta"] = scipy.special.beta
        except ImportError:
            missing["scipy"] = SCIPY_NAMES
    return ns


def safe_builtins():
    original_import = builtins.__import__

    def safe_import(name, *args, **kwargs):
        if name.split(".")[0] in BLOCKED_MODULES:
            raise ImportError(f"Import of '{name}' is blocked")
        return original_import(name, *args, **kwargs)

    b = {k: v for k, v in vars(builtins).items() if k not in BLOCKED_BUILTINS}
    b["__import__"] = safe_import
    return b


def missing_hint(exc, missing):
    name = getattr(exc, "name", None)
    if not isinstance(exc, NameError) or not name:
        return ""
    for lib, names in missing.items():
        if name in names:
            return (f"\n{lib} is not installed for {sys.executable}: install the Debian package "
                    f"{DEBIAN_PACKAGE[lib]} (apt-get install {DEBIAN_PACKAGE[lib]}) "
                    f"or point [tools] python at an interpreter that has it")
    return ""


def user_traceback(exc):
    """The traceback without the harness's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != CODE_FILENAME:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))


def run(cfg, code):
    tree, errors = parse(code)
    if errors:
        return False, "Validation errors:\n" + "\n".join(f"- {e}" for e in errors)
    tree = auto_print(code, tree)
    import linecache

    linecache.cache[CODE_FILENAME] = (len(code), None, code.splitlines(True), CODE_FILENAME)
    missing = {}
    capture = Capture(cfg.get("output_chars", 4 << 20))
    real_stdout = sys.stdout
    try:
        ns = build_namespace(referenced_names(tree), missing)
        ns["__builtins__"] = safe_builtins()
        program = builtins.compile(tree, CODE_FILENAME, "exec")
        sys.stdout = capture
        builtins.exec(program, ns)
    except BaseException as e:  # noqa: B036 - SystemExit and KeyboardInterrupt are user errors here too
        sys.stdout = real_stdout
        return False, f"{type(e).__name__}: {e}{missing_hint(e, missing)}\n{user_traceback(e)}"
    sys.stdout = real_stdout
    printed = capture.getvalue()
    result = ns.get("result")
    if result is not None:
        try:
            shown = str(result)
        except Exception as e:
            return False, f"{type(e).__name__}: {e}\n{user_traceback(e)}"
        return True, f"{printed.rstrip()}\nresult = {shown}" if printed else shown
    if printed:
        return True, printed.rstrip()
    return True, "No output. Add print() to see results."


def main():
    cfg = json.loads(sys.argv[1])
    out = os.fdopen(cfg["result_fd"], "w", encoding="utf-8", errors="backslashreplace")
    if cfg.get("cwd"):
        os.chdir(cfg["cwd"])
    set_limits(cfg)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(100_000)
    code = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    sys.stdin = open(os.devnull, encoding="utf-8")
    try:
        ok, text = run(cfg, code)
    except MemoryError:
        ok, text = False, "MemoryError: the code exceeded the memory limit"
    json.dump({"ok": ok, "output": text}, out)
    out.flush()
    # Skip interpreter teardown (module finalizers of user objects).
    os._exit(0)


main()
