#!/usr/bin/env python3
"""A scripted ACP agent for the runner's tests: `fake_agent.py MODE [LOG]`; MODE says what it
does with a prompt:

  write    writes `answer.txt` through fs/write_text_file, after asking permission, and ends
  stall    never answers the prompt until session/cancel, then ends with `cancelled`
  escape   tries to read /etc/hostname and write ../outside.txt, then ends (answers in LOG)
  command  runs `echo from-terminal > ran.txt` in a terminal and waits for it
"""

import json
import os
import sys
import threading

MODE = sys.argv[1]
lock = threading.Lock()
pending = {}
next_id = [100]
cancelled = threading.Event()


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def call(method, params):
    with lock:
        next_id[0] += 1
        rid = next_id[0]
        done = threading.Event()
        pending[rid] = [done, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    done.wait(30)
    return pending.pop(rid)[1]


def prompt(rid, params):
    sid, cwd = params["sessionId"], state["cwd"]
    stop = "end_turn"
    if MODE == "write":
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
            "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Write", "kind": "edit",
            "status": "pending"}}})
        answer = call("session/request_permission", {"sessionId": sid, "toolCall": {
            "toolCallId": "t1"}, "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
        allowed = answer.get("result", {}).get("outcome", {}).get("optionId") == "yes"
        if allowed:
            call("fs/write_text_file", {"sessionId": sid, "path": os.path.join(cwd, "answer.txt"),
                                        "content": "42\n"})
        send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "t1",
            "status": "completed" if allowed else "failed"}}})
    elif MODE == "stall":
        cancelled.wait()
        stop = "cancelled"
    elif MODE == "escape":
        state["escape"] = [call("fs/read_text_file", {"sessionId": sid, "path": "/etc/hostname"}),
                           call("fs/write_text_file", {"sessionId": sid, "content": "x",
                                                       "path": os.path.join(cwd, "../outside.txt")})]
        with open(sys.argv[2], "w") as f:
            json.dump(state["escape"], f)
    elif MODE == "command":
        made = call("terminal/create", {"sessionId": sid, "command": "sh",
                                        "args": ["-c", "echo from-terminal > ran.txt"], "cwd": cwd})
        terminal = made["result"]["terminalId"]
        call("terminal/wait_for_exit", {"sessionId": sid, "terminalId": terminal})
        call("terminal/release", {"sessionId": sid, "terminalId": terminal})
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}}}})
    send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": stop}})


state = {}
for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method is None:
        with lock:
            if rid in pending:
                pending[rid][1] = message
                pending[rid][0].set()
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1,
                                                      "agentCapabilities": {}, "authMethods": []}})
    elif method == "session/new":
        state["cwd"] = message["params"]["cwd"]
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        threading.Thread(target=prompt, args=(rid, message["params"]), daemon=True).start()
    elif method == "session/cancel":
        cancelled.set()
