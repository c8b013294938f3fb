"""`chromium --headless --virtual-time-budget=MS --dump-dom PAGE` for many pages with one browser.

    python3 scripts/reports/dump_doms.py CHROMIUM PROFILE_DIR [--window-size W,H] [--budget MS] PAGE...

Writes PAGE.dom beside each PAGE: its DOM after its scripts ran. Each page gets a tab of its own
in one headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: NUL-
terminated JSON on fds 3 and 4), the steps --dump-dom takes: navigate, set a virtual time budget
(Emulation.setVirtualTimePolicy, pauseIfNetworkFetchesPending), wait until the budget has
run out, read the document's serialisation. Here the budget starts once the page has loaded
(its own scripts have run), so the page has at least what --dump-dom gives it. Starting Chromium once instead of once per page is
what makes the report tests' ~110 pages affordable on two cores. Standard library only.
A page that cannot be read gets an empty .dom (the test then fails on it); exit 1 if Chromium dies
or does not answer within 60 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys

DUMP = ("(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '')"
        " + document.documentElement.outerHTML")


class Browser:
    def __init__(self, chromium: str, profile: str, window: str | None):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        args = [chromium, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={profile}",
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check"]
        if window:
            args += [f"--window-size={window}", "--hide-scrollbars"]

        def fds():   # the child's fd 3 reads our commands, its fd 4 writes answers and events
            commands, answers = os.dup(to_child_r), os.dup(from_child_w)   # above 4, whatever the pipes got
            os.dup2(commands, 3)   # inheritable: kept across exec
            os.dup2(answers, 4)

        self.process = subprocess.Popen(args + ["about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=None if os.environ.get("DUMP_DOMS_DEBUG") else subprocess.DEVNULL, preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.pending: list[dict] = []   # events read while waiting for an answer

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        return self.next_id

    def read(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        wanted = self.send(method, params, session)
        while True:
            message = self.read()
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.pending.append(message)

    def event(self, method: str, session: str) -> dict:
        for i, message in enumerate(self.pending):
            if message.get("method") == method and message.get("sessionId") == session:
                return self.pending.pop(i)
        while True:
            message = self.read()
            if message.get("method") == method and message.get("sessionId") == session:
                return message
            self.pending.append(message)

    def dump(self, url: str, budget: int) -> str:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.call("Page.enable", session=session)
            self.call("Page.navigate", {"url": url}, session)
            self.event("Page.loadEventFired", session)
            # Then the page's timers get the budget of virtual time (a page's own scripts ran on load).
            self.call("Emulation.setVirtualTimePolicy", {"policy": "pauseIfNetworkFetchesPending", "budget": budget}, session)
            self.event("Emulation.virtualTimeBudgetExpired", session)
            result = self.call("Runtime.evaluate", {"expression": DUMP, "returnByValue": True}, session)
            return result.get("result", {}).get("value", "")
        finally:
            self.call("Target.closeTarget", {"targetId": target})
            self.pending = [m for m in self.pending if m.get("sessionId") != session]

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chromium")
    parser.add_argument("profile")
    parser.add_argument("--window-size")
    parser.add_argument("--budget", type=int, default=2000, help="virtual time budget in ms (as --virtual-time-budget)")
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()
    browser = Browser(args.chromium, args.profile, args.window_size)
    status = 0

    def too_long(_signal, _frame):
        raise TimeoutError("no answer from chromium within 60 s")

    signal.signal(signal.SIGALRM, too_long)
    try:
        for page in args.pages:
            signal.alarm(60)
            try:
                dom = browser.dump("file://" + os.path.abspath(page), args.budget)
            except (EOFError, TimeoutError):
                raise
            except Exception as error:   # this page only: the test reports it as unread
                print(f"{page}: {error}", file=sys.stderr)
                dom = ""
            with open(page + ".dom", "w", encoding="utf-8") as out:
                out.write(dom)
    except (EOFError, TimeoutError) as error:
        print(error, file=sys.stderr)
        status = 1
    finally:
        signal.alarm(0)
        browser.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
