"""Lists the failed tests in the JUnit XML file `swift test --xunit-output` writes.

    python scripts/failed-tests.py RESULTS.xml            # one `--filter` pattern per failed test
    python scripts/failed-tests.py RESULTS.xml --explain  # "Suite/test(): first line of each failure"
    python scripts/failed-tests.py RESULTS.xml --passed   # exit 0 if some test ran and none failed

A pattern matches the test's identifier (`Module.Suite/test(arguments:)`) and no other, so
`swift test --filter PATTERN` runs that one test again.
"""

import re
import sys
import xml.etree.ElementTree as ElementTree


def failed_tests(path):
    """Yields (identifier, failure messages) for each test case with a failure or an error."""
    for case in ElementTree.parse(path).iter("testcase"):
        problems = case.findall("failure") + case.findall("error")
        if problems:
            suite = case.get("classname", "").split(".")[-1]
            messages = [(problem.get("message") or problem.text or "").strip() for problem in problems]
            yield f"{suite}/{case.get('name', '')}", messages


def main(arguments):
    if len(arguments) not in (1, 2) or (len(arguments) == 2 and arguments[1] not in ("--explain", "--passed")):
        sys.exit("usage: failed-tests.py RESULTS.xml [--explain | --passed]")
    path, mode = arguments[0], (arguments[1] if len(arguments) == 2 else "")
    if mode == "--passed":
        ran = sum(1 for _ in ElementTree.parse(path).iter("testcase"))
        sys.exit(0 if ran > 0 and not any(failed_tests(path)) else 1)
    for identifier, messages in failed_tests(path):
        if mode == "--explain":
            first_lines = "; ".join(message.splitlines()[0] for message in messages if message)
            print(f"{identifier}: {first_lines[:300]}")
        else:
            # The identifier `swift test --filter` matches goes on past the arguments' closing
            # parenthesis, so the pattern is not anchored at the end; the parenthesis ends the name.
            print(re.escape(identifier))


if __name__ == "__main__":
    main(sys.argv[1:])
