"""Fails when a function in a bench script binds a name that the script defines at top
level as a function or class: the binding makes the name local to the whole function,
and any call of the top-level one in it (or in a lambda inside it) raises NameError
only when a bench reaches it, after minutes of runs. Usage: check_names.py FILE..."""
import symtable
import sys


def shadowed(path):
    top = symtable.symtable(open(path).read(), path, "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_namespace()}
    found = []

    def walk(table):
        for child in table.get_children():
            if child.get_type() == "function":
                local = {s.get_name() for s in child.get_symbols() if s.is_local() or s.is_parameter()}
                found.extend(f"{path}: {child.get_name()}() binds {n}, a top-level function of the script"
                             for n in sorted(local & defined))
            walk(child)

    walk(top)
    return found


if __name__ == "__main__":
    problems = [p for path in sys.argv[1:] for p in shadowed(path)]
    print("\n".join(problems) or f"{len(sys.argv) - 1} file(s): no function binds a top-level function's name")
    sys.exit(1 if problems else 0)
