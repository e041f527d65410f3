"""One task with one agent: the editor's whole session, then the hidden check.

The agent is started fresh for every task, in the workspace, with a scratch home. The
runner initializes it as an editor with file and terminal capabilities, opens a session in
the workspace, sends the statement as the prompt and waits for the answer, the time limit,
or the task's model request limit (then `session/cancel`, and a grace period for the turn
to end). Then the agent is stopped, its terminals killed, and the hidden check decides.
"""

import os
import tempfile
import threading
import time

from . import agents, sandbox, tasks
from .acp import AgentGone, Connection, RpcError
from .editor import Editor, Tally
from .proxy import Counter

CANCEL_GRACE = 30


class Options:
    def __init__(self, **values):
        self.__dict__.update(values)


def run_task(task, spec, endpoint, proxy, replay, options):
    """The result (a dict for the report) of `task` run by the agent `spec`."""
    home = tempfile.mkdtemp(prefix="home-", dir=options.scratch)
    agent = agents.resolve(spec, endpoint, home)
    tool_env = agents.base_env(home)
    tool_env.pop("TMPDIR", None)
    # The agent's temporary files (tandem's sandbox policy for a command and the commands'
    # private temp folders) live here, where the sandboxed terminals can reach them; it is
    # their home too (the agent's own home, with its config and key, they cannot see).
    agent_tmp = os.path.join(home, "tmp")
    os.makedirs(agent_tmp)
    agent.env["TMPDIR"] = agent_tmp
    tool_env["HOME"] = agent_tmp
    if options.node_dir:
        tool_env["PATH"] = options.node_dir + os.pathsep + tool_env["PATH"]
        agent.env["PATH"] = options.node_dir + os.pathsep + agent.env["PATH"]
    workspace = tasks.workspace(task, options.scratch)
    before = tasks.manifest(workspace)
    counter = Counter(options.max_requests)
    proxy.counter = counter
    if replay is not None:
        replay.load(task.replay)
    tally = Tally()
    # The agent's binary stays visible to its sandboxed commands (tandem runs its own sandbox
    # through it), as does the Node the TypeScript tasks use.
    visible = [p for p in (os.path.realpath(agent.argv[0]), options.node_dir) if p]
    editor = Editor(workspace, options.sandbox, options.permissions, tool_env, tally,
                    shared=(agent_tmp,), visible=visible)
    result = {"task": task.id, "category": task.category, "language": task.language,
              "agent": agent.name, "agent_version": agent.version, "agent_command": agent.argv[0]}
    stderr_path = os.path.join(options.scratch, f"{task.id}.{agent.name}.stderr")
    started = time.monotonic()
    try:
        connection = Connection(sandbox.agent_argv(agent.argv, options.sandbox), agent.env,
                                workspace, stderr_path, editor.handle, editor.on_notification)
    except OSError as error:
        connection = None
        result.update(ended_by="error", error=f"cannot start the agent: {error}")
    if connection is not None:
        try:
            result.update(_converse(connection, agent, task, workspace, counter, options))
        except Exception as error:  # a malformed answer must not end the whole run
            result.update(ended_by="error", error=f"the runner failed: {_describe(error)}")
        finally:
            result["wall_s"] = round(time.monotonic() - started, 2)
            editor.close()
            connection.close()
            result["protocol_errors"] = connection.protocol_errors[:5]
    result.setdefault("wall_s", round(time.monotonic() - started, 2))
    result.update(counter.as_dict())
    result.update(tool_calls=len(tally.tool_calls), failed_tool_calls=tally.failed_calls(),
                  failures=tally.failures(),
                  failed_edits=tally.failed_edits(),
                  permission_requests=tally.permission_requests,
                  permissions_rejected=tally.permissions_rejected,
                  terminals=tally.terminals, fs_reads=tally.fs_reads, fs_writes=tally.fs_writes,
                  answer="".join(tally.answer)[-600:],
                  changed=tasks.changed(before, tasks.manifest(workspace)))
    result["solved"], result["check_output"] = tasks.run_check(
        task, workspace, options.sandbox, tool_env, visible=visible)
    result["stderr"] = _tail(stderr_path)
    if options.keep:
        os.rename(workspace, tempfile.mkdtemp(prefix=f"{task.id}.{agent.name}.",
                                              dir=options.scratch))
    return result


def _converse(connection, agent, task, workspace, counter, options):
    """Initialize, open a session, prompt, and wait within the limits."""
    try:
        init = connection.request("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                                   "terminal": True},
            "clientInfo": {"name": "tandem-bench", "version": "1"},
        }, timeout=120)
        if not isinstance(init, dict):
            raise TypeError("the initialize result is not an object")
        methods = [m.get("id") for m in init.get("authMethods") or [] if isinstance(m, dict)]
        if agent.auth_method and agent.auth_method in methods:
            connection.request("authenticate", {"methodId": agent.auth_method}, timeout=120)
        opened = connection.request("session/new", {"cwd": workspace, "mcpServers": []},
                                    timeout=120)
        session_id = opened["sessionId"]
    except (RpcError, AgentGone, TimeoutError, KeyError, TypeError) as error:
        return {"ended_by": "error", "error": f"setting up the session: {_describe(error)}"}
    answer = {}

    def prompt():
        try:
            answer["result"] = connection.request("session/prompt", {
                "sessionId": session_id, "prompt": [{"type": "text", "text": task.statement}]})
        except Exception as error:  # an answer of the wrong shape is the agent's error
            answer["error"] = _describe(error)

    waiter = threading.Thread(target=prompt, daemon=True)
    prompt_started = time.monotonic()
    waiter.start()
    ended_by = "answer"
    while waiter.is_alive():
        waiter.join(0.1)
        if counter.limit_hit.is_set() or time.monotonic() - prompt_started > options.timeout:
            ended_by = "request limit" if counter.limit_hit.is_set() else "time limit"
            connection.notify("session/cancel", {"sessionId": session_id})
            waiter.join(CANCEL_GRACE)
            break
    if waiter.is_alive():
        return {"ended_by": ended_by, "stop_reason": None,
                "error": f"no answer to session/prompt {CANCEL_GRACE} s after session/cancel"}
    result = answer.get("result")
    stop = result.get("stopReason") if isinstance(result, dict) else None
    if "error" not in answer and not isinstance(stop, str):
        answer["error"] = f"session/prompt answered without a stopReason: {result!r:.200}"
    if counter.limit_hit.is_set():
        ended_by = "request limit"
    elif "error" in answer:
        ended_by = "agent exited" if connection.gone.is_set() else "error"
    return {"ended_by": ended_by, "stop_reason": stop, "error": answer.get("error"),
            "turn_s": round(time.monotonic() - prompt_started, 2)}


def _describe(error):
    if isinstance(error, RpcError):
        return f"{error.code}: {error.message}"
    if isinstance(error, AgentGone):
        return f"the agent exited during {error}"
    if isinstance(error, TimeoutError):
        return f"no answer to {error}"
    return f"{type(error).__name__}: {error}"


def _tail(path, size=2000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - size, 0))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
