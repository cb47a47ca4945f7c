#!/usr/bin/env python3
"""Fails when a step of a GitHub workflow can pass although its `xcodebuild` or `swift` failed inside a pipe.

`xcodebuild … | tail -3` exits with `tail`'s status unless the shell has pipefail. GitHub runs a step in
`bash -e {0}` (no pipefail) by default and in `bash --noprofile --norc -eo pipefail {0}` when the step, its job or the
workflow says `shell: bash`. So a step whose commands pipe `xcodebuild` or `swift` into anything passes this check
only if its shell is `bash` by one of those, or its script sets pipefail before the pipe.

    scripts/check-workflow.py [WORKFLOW …]      (default: .github/workflows/*.yml)
    scripts/check-workflow.py --self-test       (a copy without its pipefail must fail)

Reads the YAML by its indentation (no YAML package needed): each `run:` (a line, or a `|` block), the `shell:` of its
step, of its job's `defaults.run` and of the workflow's.
"""
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PIPED = re.compile(r"\b(xcodebuild|swift)\b[^|]*\|(?!\|)")


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def default_shell(lines: list[str], start: int, depth: int) -> str | None:
    """The `defaults: run: shell:` of the mapping at `depth` from line `start` on, if it has one."""
    for k in range(start, len(lines)):
        line = lines[k]
        if line.strip() and indent(line) < depth:
            break
        if indent(line) == depth and line.strip() == "defaults:":
            for inner in lines[k + 1:k + 6]:
                match = re.match(r"\s+shell:\s*(\S+)", inner)
                if match:
                    return match.group(1)
    return None


def problems(path: pathlib.Path) -> list[str]:
    lines = path.read_text().split("\n")
    workflow_shell = default_shell(lines, 0, 0)
    found = []
    job_shell = None
    for number, line in enumerate(lines):
        if re.match(r"^  [\w-]+:\s*$", line) and number > 0:
            job_shell = default_shell(lines, number + 1, 4)
        match = re.match(r"^(\s*)(- )?run:\s*(.*)$", line)
        if not match:
            continue
        depth = indent(line) + (2 if match.group(2) else 0)
        if match.group(3).strip() in ("|", "|-", ">"):
            body, k = [], number + 1
            while k < len(lines) and (not lines[k].strip() or indent(lines[k]) > depth):
                body.append(lines[k].strip())
                k += 1
        else:
            body = [match.group(3)]
        # The step's own keys: from its `- ` line to the next line as shallow as that one.
        start = number
        while start > 0 and not (lines[start].lstrip().startswith("- ") and indent(lines[start]) == depth - 2):
            start -= 1
        end = number + 1
        while end < len(lines) and (not lines[end].strip() or indent(lines[end]) >= depth):
            end += 1
        step_shell = None
        for other in lines[start:end]:
            shell = re.match(r"\s*(?:- )?shell:\s*(\S+)", other)
            if shell and indent(other) in (depth, depth - 2):
                step_shell = shell.group(1)
        shell = step_shell or job_shell or workflow_shell
        script = "\n".join(body).replace("\\\n", " ")
        pipefail_at = min((m.start() for m in re.finditer(r"set -\w*o pipefail|set -o pipefail", script)), default=None)
        for piped in PIPED.finditer(script):
            if shell == "bash" or (pipefail_at is not None and pipefail_at < piped.start()):
                continue
            text = piped.group(0).strip()
            found.append(f"{path}:{number + 1}: a step pipes `{text}…` in a shell without pipefail "
                         f"(shell: {shell or 'the default, bash -e'}): its failure would pass; say `shell: bash` or "
                         f"`set -o pipefail` first")
    return found


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        workflow = ROOT / ".github/workflows/ci.yml"
        text = workflow.read_text()
        broken = re.sub(r"(?m)^defaults:\n  run:\n    shell: bash\n", "", text).replace("set -o pipefail\n", "\n")
        with tempfile.TemporaryDirectory() as work:
            copy = pathlib.Path(work) / "ci.yml"
            copy.write_text(broken)
            found = problems(copy)
        if not found:
            print("the check passed a copy of ci.yml without its pipefail")
            return 1
        print(f"   a copy of ci.yml without its pipefail fails it ({len(found)} steps), as it must")
        return 0
    paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted((ROOT / ".github/workflows").glob("*.yml"))
    found = [problem for path in paths for problem in problems(path)]
    for problem in found:
        print(problem)
    if found:
        return 1
    print(f"   {len(paths)} workflow(s): no failing xcodebuild or swift can pass through a pipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
