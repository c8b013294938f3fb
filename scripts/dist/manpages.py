#!/usr/bin/env python3
"""Man pages for `make dist` / `make install`: one roff page per command, read from the binary itself.

    python3 scripts/dist/manpages.py BINARY OUTDIR VERSION

swift-argument-parser describes the whole command tree as JSON (`BINARY --experimental-dump-help`:
names, abstracts, discussions, every argument with its names, value name and default); this writes
OUTDIR/bleanalyze.1 and OUTDIR/bleanalyze-SUBCOMMAND.1 (nested: bleanalyze-rules-list.1) from it.
Its own generate-manual plugin does the same but builds a debug copy of the package first (minutes
here), so the release binary is read directly. Format: man-pages(7) sections NAME, SYNOPSIS,
DESCRIPTION, OPTIONS, SEE ALSO.
"""
import json
import subprocess
import sys
from pathlib import Path


def roff(text):
    """Text safe in roff: backslashes escaped, a line starting with . or ' protected."""
    text = text.replace("\\", "\\e")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def flag_names(arg):
    names = []
    for name in arg.get("names", []):
        dash = "\\-" if name["kind"] in ("short", "longWithSingleDash") else "\\-\\-"
        names.append(f"\\fB{dash}{roff(name['name'])}\\fR")
    return names


def synopsis_item(arg):
    value = roff(arg.get("valueName", ""))
    if arg["kind"] == "positional":
        item = f"\\fI{value}\\fR"
    else:
        pref = arg.get("preferredName") or arg["names"][0]
        dash = "\\-" if pref["kind"] in ("short", "longWithSingleDash") else "\\-\\-"
        item = f"\\fB{dash}{roff(pref['name'])}\\fR"
        if arg["kind"] == "option":
            item += f" \\fI{value}\\fR"
    if arg.get("isRepeating"):
        item += " ..."
    return f"[{item}]" if arg.get("isOptional") else item


def page(command, path, version, children):
    name = "-".join(path)
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    out = [f'.TH "{name.upper()}" "1" "" "bleanalyze {version}" "User Commands"',
           ".SH NAME", f"{roff(name)} \\- {roff(command.get('abstract', ''))}",
           ".SH SYNOPSIS", f".B {' '.join(path)}"]
    if children:
        out.append("\\fIsubcommand\\fR")
    out += [synopsis_item(a) for a in shown]
    out += [".SH DESCRIPTION", roff(command.get("abstract", ""))]
    if command.get("discussion"):
        out += [".PP", roff(command["discussion"])]
    if children:
        out.append(".SH SUBCOMMANDS")
        for child in children:
            out += [".TP", f"\\fB{roff(child['commandName'])}\\fR",
                    f"{roff(child.get('abstract', ''))} See \\fB{name}-{roff(child['commandName'])}\\fR(1)."]
    if shown:
        out.append(".SH OPTIONS")
        for arg in shown:
            head = ", ".join(flag_names(arg)) if arg["kind"] != "positional" else ""
            if arg["kind"] == "option":
                head += f" \\fI{roff(arg.get('valueName', ''))}\\fR"
            if arg["kind"] == "positional":
                head = f"\\fI{roff(arg.get('valueName', ''))}\\fR"
            text = roff(arg.get("abstract", ""))
            if "defaultValue" in arg:
                text += f" (default: {roff(arg['defaultValue'])})"
            out += [".TP", head, text]
            if arg.get("discussion"):
                out += [".IP", roff(arg["discussion"] if isinstance(arg["discussion"], str) else "")]
    related = ["bleanalyze"] if len(path) > 1 else []
    related += [f"{name}-{c['commandName']}" for c in children]
    if related:
        out += [".SH SEE ALSO", ", ".join(f"\\fB{r}\\fR(1)" for r in related)]
    return "\n".join(out) + "\n"


def write(command, path, version, outdir, written):
    children = [c for c in command.get("subcommands", [])
                if c.get("shouldDisplay", True) and c["commandName"] != "help"]
    target = outdir / ("-".join(path) + ".1")
    target.write_text(page(command, path, version, children))
    written.append(target)
    for child in children:
        write(child, path + [child["commandName"]], version, outdir, written)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, outdir, version = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    dump = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True,
                                     capture_output=True, text=True).stdout)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    write(dump["command"], ["bleanalyze"], version, outdir, written)
    print(f"{len(written)} man pages in {outdir}")


if __name__ == "__main__":
    main()
