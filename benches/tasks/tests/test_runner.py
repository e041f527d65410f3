"""The runner's own tests: usage counting, the replay server's contract, the editor's
confinement, the limits, and the report. Run: python3 -m unittest discover -s benches/tasks/tests
"""

import json
import os
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from runner import agents, report, sandbox, tasks  # noqa: E402
from runner.acp import RpcError  # noqa: E402
from runner.editor import Editor, Tally  # noqa: E402
from runner.proxy import Counter, Proxy, UsageReader, usage_in  # noqa: E402
from runner.scripted import ReplayServer  # noqa: E402
from runner.session import Options, run_task  # noqa: E402
from runner.agents import Endpoint  # noqa: E402


def sse(*events):
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def post(url, body):
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def capturing_server():
    """A server answering `{}` to every POST, and the (path, headers, body) of each it got."""
    import http.server
    import threading
    seen = []

    class Capture(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers, body))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


class Usage(unittest.TestCase):
    def test_chat_completions_stream_counts_the_final_usage_chunk(self):
        reader = UsageReader(streamed=True)
        data = sse({"choices": [{"delta": {"content": "hi"}}]},
                   {"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 7}})
        for i in range(0, len(data), 5):  # split anywhere, as a socket does
            reader.feed(data[i:i + 5])
        self.assertEqual(reader.finish(), (120, 7))

    def test_responses_api_counts_response_completed(self):
        reader = UsageReader(streamed=True)
        reader.feed(sse({"type": "response.output_text.delta", "delta": "x"},
                        {"type": "response.completed", "response": {
                            "usage": {"input_tokens": 50, "output_tokens": 9}}}))
        self.assertEqual(reader.finish(), (50, 9))

    def test_anthropic_messages_adds_cached_input_and_takes_the_last_output_count(self):
        reader = UsageReader(streamed=True)
        reader.feed(sse({"type": "message_start", "message": {"usage": {
            "input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 1}}},
            {"type": "message_delta", "usage": {"output_tokens": 33}}))
        self.assertEqual(reader.finish(), (100, 33))

    def test_a_json_body_and_an_answer_without_usage(self):
        reader = UsageReader(streamed=False)
        reader.feed(json.dumps({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}).encode())
        self.assertEqual(reader.finish(), (3, 4))
        bare = UsageReader(streamed=True)
        bare.feed(sse({"choices": [{"delta": {"content": "hi"}}]}))
        self.assertIsNone(bare.finish())
        self.assertIsNone(usage_in(["not", "an", "object"]))


class ReplayAndProxy(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()
        script = {"turns": [
            {"events": [{"tool_call": {"id": "c1", "name": "read_file",
                                       "arguments": {"path": "a"}}}]},
            {"events": [{"text": "done"}]}]}
        self.script = os.path.join(self.folder, "replay.json")
        with open(self.script, "w") as f:
            json.dump(script, f)
        self.replay = ReplayServer()
        self.replay.load(self.script)
        self.proxy = Proxy(self.replay.base_url)
        self.counter = Counter(limit=2)
        self.proxy.counter = self.counter
        self.url = self.proxy.base_url + "/chat/completions"

    def tearDown(self):
        self.proxy.close()
        self.replay.close()

    def test_a_request_that_drops_a_tool_result_is_refused_like_a_real_server(self):
        status, body = post(self.url, {"messages": [{"role": "user", "content": "go"}],
                                       "stream": True})
        self.assertEqual(status, 200)
        self.assertIn(b'"c1"', body)
        status, body = post(self.url, {"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]}]})
        self.assertEqual(status, 400)
        self.assertIn(b"c1", body)
        self.assertEqual(self.counter.errors, 1)

    def test_the_proxy_asks_for_usage_counts_it_and_refuses_past_the_limit(self):
        messages = [{"role": "user", "content": "go"}]
        status, body = post(self.url, {"messages": messages, "stream": True})
        self.assertEqual(status, 200)
        self.assertIn(b'"usage"', body)  # include_usage was added on the way
        messages += [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "text"}]
        status, body = post(self.url, {"messages": messages, "stream": False})
        self.assertEqual((status, json.loads(body)["choices"][0]["message"]["content"]),
                         (200, "done"))
        self.assertEqual(self.counter.requests, 2)
        self.assertGreater(self.counter.prompt_tokens, 0)
        self.assertEqual(self.counter.without_usage, 0)
        self.assertFalse(self.counter.limit_hit.is_set())
        status, body = post(self.url, {"messages": messages})
        self.assertEqual(status, 400)
        self.assertIn(b"limit", body)
        self.assertTrue(self.counter.limit_hit.is_set())
        self.assertEqual(self.counter.requests, 2)


class ProxyEdges(unittest.TestCase):
    def setUp(self):
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "replay.json"), "w") as f:
            json.dump({"turns": [{"events": [{"text": "one"}]}, {"events": [{"text": "two"}]}]}, f)
        self.replay = ReplayServer()
        self.replay.load(os.path.join(folder, "replay.json"))
        self.proxy = Proxy(self.replay.base_url)
        self.proxy.counter = self.counter = Counter(limit=1)

    def tearDown(self):
        self.proxy.close()
        self.replay.close()

    def test_only_the_model_routes_pass_and_other_spellings_are_not_free_requests(self):
        base = self.proxy.base_url
        for path in ("/chat/completions/", "/chat/completions;x", "//chat/completions",
                     "/../v1/chat/completions", "/slots"):
            status, _ = post(base + path, {"messages": []})
            self.assertEqual(status, 404, path)
        self.assertEqual(self.counter.requests, 0)
        status, _ = post(base + "/chat/completions", {"messages": []})
        self.assertEqual(status, 200)
        with urllib.request.urlopen(base + "/models", timeout=10) as answer:
            self.assertEqual(answer.status, 200)

    def test_the_endpoints_key_is_put_in_on_the_way_out_and_agents_hold_a_stand_in(self):
        server, seen = capturing_server()
        proxy = Proxy(f"http://127.0.0.1:{server.server_address[1]}/v1", key="sk-real")
        request = urllib.request.Request(proxy.base_url + "/messages", b"{}", {
            "Authorization": "Bearer sk-stand-in", "x-api-key": "sk-stand-in"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()
        proxy.close()
        server.shutdown()
        server.server_close()
        headers = seen[0][1]
        self.assertEqual((headers["authorization"], headers["x-api-key"]),
                         ("Bearer sk-real", "sk-real"))

    def test_the_answer_cap_lowers_each_agents_own_limit_and_fills_a_missing_one(self):
        server, seen = capturing_server()
        proxy = Proxy(f"http://127.0.0.1:{server.server_address[1]}/v1", answer_cap=256)
        for path, body in [("/chat/completions", {"max_tokens": 4096}),
                           ("/chat/completions", {"max_completion_tokens": 9000, "max_tokens": 100}),
                           ("/chat/completions", {}),
                           ("/messages", {"max_tokens": 8192}),
                           ("/responses", {"max_output_tokens": 2048}),
                           ("/responses", {})]:
            status, _ = post(proxy.base_url + path, body)
            self.assertEqual(status, 200, path)
        proxy.close()
        server.shutdown()
        server.server_close()
        limits = [{k: v for k, v in json.loads(body).items() if k.startswith("max_")}
                  for _, _, body in seen]
        self.assertEqual(limits, [{"max_tokens": 256},
                                  {"max_completion_tokens": 256, "max_tokens": 100},
                                  {"max_tokens": 256},
                                  {"max_tokens": 256},
                                  {"max_output_tokens": 256},
                                  {"max_output_tokens": 256}])

    def test_without_a_cap_the_agents_limit_goes_through_as_it_is(self):
        self.assertIsNone(self.proxy.answer_cap)
        body = {"messages": [], "max_tokens": 4096}
        shaped, streamed = self.proxy._shaped("/v1/chat/completions", json.dumps(body).encode())
        self.assertEqual(json.loads(shaped), body)
        self.assertFalse(streamed)

    def test_a_chunked_request_body_reaches_the_server_whole(self):
        import http.client
        port = self.proxy.server.server_address[1]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = json.dumps({"messages": [{"role": "user", "content": "x" * 5000}]}).encode()
        connection.request("POST", "/v1/chat/completions", body=iter([body[:100], body[100:]]),
                           headers={"Content-Type": "application/json"}, encode_chunked=True)
        answer = connection.getresponse()
        self.assertEqual(answer.status, 200)
        self.assertIn(b"one", answer.read())
        self.assertGreater(self.counter.prompt_tokens, 1000)  # the whole body was seen
        connection.close()


class Confinement(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.workspace = os.path.join(self.root, "ws")
        os.makedirs(self.workspace)
        with open(os.path.join(self.root, "secret"), "w") as f:
            f.write("secret")
        os.symlink(os.path.join(self.root, "secret"), os.path.join(self.workspace, "link"))
        self.tally = Tally()
        self.editor = Editor(self.workspace, "none", "allow", dict(os.environ), self.tally)

    def refused(self, method, params):
        with self.assertRaises(RpcError) as raised:
            self.editor.handle(method, params)
        return raised.exception

    def test_paths_outside_the_workspace_are_refused_through_dots_and_links(self):
        self.refused("fs/read_text_file", {"path": os.path.join(self.workspace, "../secret")})
        self.refused("fs/read_text_file", {"path": os.path.join(self.workspace, "link")})
        self.refused("fs/read_text_file", {"path": "secret"})
        self.refused("fs/write_text_file", {"path": os.path.join(self.workspace, "link"),
                                            "content": "x"})
        self.refused("terminal/create", {"command": "true", "cwd": self.root})
        with open(os.path.join(self.root, "secret")) as f:
            self.assertEqual(f.read(), "secret")

    def test_reads_by_line_writes_make_folders_and_unknown_methods_are_refused(self):
        path = os.path.join(self.workspace, "sub/dir/f.txt")
        self.editor.handle("fs/write_text_file", {"path": path, "content": "a\nb\nc\n"})
        self.assertEqual(self.editor.handle("fs/read_text_file",
                                            {"path": path, "line": 2, "limit": 1}),
                         {"content": "b\n"})
        self.assertEqual(self.refused("fs/nope", {}).code, -32601)
        self.refused("fs/read_text_file", {"path": os.path.join(self.workspace, "sub")})
        os.symlink("sub/dir/f.txt", os.path.join(self.workspace, "inner-link"))
        self.refused("fs/read_text_file", {"path": os.path.join(self.workspace, "inner-link")})
        os.mkfifo(os.path.join(self.workspace, "pipe"))
        self.refused("fs/read_text_file", {"path": os.path.join(self.workspace, "pipe")})
        self.refused("fs/read_text_file", {"path": path, "line": "2"})
        self.refused("terminal/create", {"command": "true", "args": "-c"})
        self.refused("terminal/create", {"command": "true", "outputByteLimit": "9"})
        self.refused("terminal/create", {"command": "true", "env": [{"name": "A=B", "value": ""}]})
        self.assertEqual(self.refused("fs/read_text_file", {
            "path": os.path.join(self.workspace, "missing")}).code, -32002)
        self.editor.close()
        self.refused("fs/read_text_file", {"path": path})

    def test_permission_policies(self):
        options = [{"optionId": "a", "kind": "allow_always"}, {"optionId": "o", "kind": "allow_once"},
                   {"optionId": "r", "kind": "reject_once"}]
        pick = lambda policy: Editor(self.workspace, "none", policy, {}, self.tally).handle(
            "session/request_permission", {"options": options})["outcome"]["optionId"]
        self.assertEqual([pick("allow"), pick("allow-always"), pick("reject")], ["o", "a", "r"])
        self.assertEqual((self.tally.permission_requests, self.tally.permissions_rejected), (3, 1))

    def test_terminal_output_is_cut_from_the_start_on_a_character_boundary(self):
        made = self.editor.handle("terminal/create", {
            "command": "printf", "args": ["aaaa\u00e9\u00e9\u00e9end"], "outputByteLimit": 6})
        status = self.editor.handle("terminal/wait_for_exit", made)
        self.assertEqual(status["exitCode"], 0)
        output = self.editor.handle("terminal/output", made)
        self.assertTrue(output["truncated"])
        self.assertEqual(output["output"], "\u00e9end")
        self.editor.handle("terminal/release", made)
        self.refused("terminal/output", made)

    @unittest.skipUnless(sandbox.available(), "bwrap does not run here")
    def test_sandboxed_commands_write_only_the_workspace_and_have_no_network(self):
        editor = Editor(self.workspace, "bwrap", "allow", dict(os.environ), self.tally)
        script = (f"echo in > {self.workspace}/in.txt; echo out > {self.root}/out.txt; "
                  "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)' "
                  "&& echo NET-OK")
        made = editor.handle("terminal/create", {"command": "sh", "args": ["-c", script],
                                                 "cwd": self.workspace})
        editor.handle("terminal/wait_for_exit", made)
        output = editor.handle("terminal/output", made)["output"]
        self.assertTrue(os.path.exists(os.path.join(self.workspace, "in.txt")))
        self.assertFalse(os.path.exists(os.path.join(self.root, "out.txt")))
        self.assertNotIn("NET-OK", output)

    @unittest.skipUnless(sandbox.available(), "bwrap does not run here")
    def test_a_command_outlives_the_thread_that_asked_for_it(self):
        import threading
        editor = Editor(self.workspace, "bwrap", "allow", dict(os.environ), self.tally)
        made = {}
        asker = threading.Thread(target=lambda: made.update(editor.handle("terminal/create", {
            "command": "sh", "args": ["-c", "sleep 1; echo finished"]})))
        asker.start()
        asker.join()  # the request's thread is gone, as after an answer
        status = editor.handle("terminal/wait_for_exit", made)
        self.assertEqual(status, {"exitCode": 0, "signal": None})
        self.assertIn("finished", editor.handle("terminal/output", made)["output"])

    @unittest.skipUnless(sandbox.available(), "bwrap does not run here")
    def test_sandboxed_commands_see_neither_the_home_folder_nor_the_suite_and_get_their_env(self):
        editor = Editor(self.workspace, "bwrap", "allow", dict(os.environ), self.tally)
        home = os.path.expanduser("~")
        script = (f"ls -A {home} | grep -v -e '^\\.cargo$' -e '^\\.rustup$' -e '^\\.pyenv$'"
                  f" | head -3; test -e {sandbox.TASKS_DIR}/run.py && echo SUITE-VISIBLE;"
                  " echo \"FOO=$FOO\"")
        made = editor.handle("terminal/create", {"command": "sh", "args": ["-c", script],
                                                 "env": [{"name": "FOO", "value": "bar"}]})
        editor.handle("terminal/wait_for_exit", made)
        output = editor.handle("terminal/output", made)["output"]
        self.assertEqual(output.strip().splitlines(), ["FOO=bar"])


class Sessions(unittest.TestCase):
    """The runner against a scripted ACP agent (fake_agent.py): limits, policies, confinement."""

    def setUp(self):
        self.folder = tempfile.mkdtemp()
        task = os.path.join(self.folder, "python-fake")
        os.makedirs(os.path.join(task, "repo"))
        os.makedirs(os.path.join(task, "check"))
        with open(os.path.join(task, "repo/README"), "w") as f:
            f.write("a task\n")
        with open(os.path.join(task, "task.toml"), "w") as f:
            f.write('statement = "Write 42 to answer.txt"\ncategory = "feature"\n'
                    'language = "python"\ncheck = "grep -qx 42 answer.txt"\n')
        self.task = tasks.Task(task)
        self.proxy = Proxy("http://127.0.0.1:9/v1")
        self.endpoint = Endpoint(self.proxy.base_url, "m", "k", "chat-completions")

    def tearDown(self):
        self.proxy.close()

    def run_fake(self, mode, timeout=60, permissions="allow"):
        scratch = tempfile.mkdtemp()
        options = Options(scratch=scratch, node_dir=None, max_requests=5, timeout=timeout,
                          permissions=permissions, sandbox="none", keep=False)
        spec = (f"fake={sys.executable} {os.path.join(HERE, 'fake_agent.py')} {mode} "
                f"{os.path.join(scratch, 'log.json')}")
        return run_task(self.task, spec, self.endpoint, self.proxy, None, options), scratch

    def test_an_agent_that_writes_the_answer_solves_the_task(self):
        result, _ = self.run_fake("write")
        self.assertTrue(result["solved"], result)
        self.assertEqual((result["ended_by"], result["stop_reason"]), ("answer", "end_turn"))
        self.assertEqual((result["tool_calls"], result["permission_requests"],
                          result["fs_writes"], result["failed_edits"]), (1, 1, 1, 0))
        self.assertEqual(result["changed"], ["answer.txt"])

    def test_rejecting_permissions_leaves_the_task_unsolved_and_counts_the_failed_edit(self):
        result, _ = self.run_fake("write", permissions="reject")
        self.assertFalse(result["solved"])
        self.assertEqual((result["permissions_rejected"], result["failed_edits"]), (1, 1))

    def test_the_time_limit_cancels_the_turn(self):
        result, _ = self.run_fake("stall", timeout=1)
        self.assertEqual((result["ended_by"], result["stop_reason"]), ("time limit", "cancelled"))
        self.assertFalse(result["solved"])

    def test_reads_and_writes_outside_the_workspace_get_errors(self):
        result, scratch = self.run_fake("escape")
        with open(os.path.join(scratch, "log.json")) as f:
            answers = json.load(f)
        self.assertTrue(all("error" in a for a in answers), answers)
        self.assertFalse(os.path.exists(os.path.join(scratch, "outside.txt")))

    def test_terminals_run_in_the_workspace(self):
        result, _ = self.run_fake("command")
        self.assertEqual(result["terminals"], 1)
        self.assertIn("ran.txt", result["changed"])


class Agents(unittest.TestCase):
    def test_a_relative_path_still_names_the_agent_from_the_task_folder(self):
        endpoint = Endpoint("http://127.0.0.1:1/v1", "m", "k", "chat-completions")
        home = tempfile.mkdtemp()
        tandem = agents.resolve("tandem=target/debug/tandem", endpoint, home)
        self.assertEqual(tandem.argv[:3], [os.path.abspath("target/debug/tandem"),
                                           "--base-url", "http://127.0.0.1:1/v1"])
        self.assertEqual(tandem.env["TANDEM_HOME"], os.path.join(home, "tandem"))
        custom = agents.resolve("mine=./bin/agent --url {base_url} --model {model}", endpoint, home)
        self.assertEqual(custom.argv, [os.path.abspath("bin/agent"), "--url",
                                       "http://127.0.0.1:1/v1", "--model", "m"])
        self.assertEqual(custom.env["OPENAI_BASE_URL"], "http://127.0.0.1:1/v1")
        self.assertEqual(custom.env["HOME"], home)


class CheckPlacement(unittest.TestCase):
    def test_check_files_replace_links_the_agent_planted_instead_of_writing_through_them(self):
        root = tempfile.mkdtemp()
        task = os.path.join(root, "shell-x")
        os.makedirs(os.path.join(task, "check/tests"))
        os.makedirs(os.path.join(task, "repo"))
        with open(os.path.join(task, "check/tests/hidden.sh"), "w") as f:
            f.write("exit 1\n")
        with open(os.path.join(task, "task.toml"), "w") as f:
            f.write('statement = "x"\ncategory = "bugfix"\nlanguage = "shell"\n'
                    'check = "sh tests/hidden.sh"\n')
        outside = os.path.join(root, "outside")
        os.makedirs(outside)
        workspace = os.path.join(root, "ws")
        os.makedirs(workspace)
        os.symlink(outside, os.path.join(workspace, "tests"))
        passed, _ = tasks.run_check(tasks.Task(task), workspace, "none", dict(os.environ))
        self.assertFalse(passed)
        self.assertEqual(os.listdir(outside), [])
        self.assertTrue(os.path.isfile(os.path.join(workspace, "tests/hidden.sh")))
        os.remove(os.path.join(workspace, "tests/hidden.sh"))
        os.symlink(os.devnull, os.path.join(workspace, "tests/hidden.sh"))
        passed, _ = tasks.run_check(tasks.Task(task), workspace, "none", dict(os.environ))
        self.assertFalse(passed)  # the link to /dev/null was replaced, not written through
        os.makedirs(os.path.join(workspace, ".cargo"))
        with open(os.path.join(workspace, "unittest.py"), "w") as f:
            f.write("raise SystemExit(0)\n")
        tasks.run_check(tasks.Task(task), workspace, "none", dict(os.environ))
        self.assertFalse(os.path.lexists(os.path.join(workspace, ".cargo")))
        self.assertFalse(os.path.lexists(os.path.join(workspace, "unittest.py")))


class Report(unittest.TestCase):
    def test_totals_categories_and_a_comparison(self):
        row = lambda solved, requests, category: {
            "task": f"t-{category}", "category": category, "language": "rust", "solved": solved,
            "requests": requests, "prompt_tokens": 100 * requests, "completion_tokens": 10,
            "wall_s": 1.0, "tool_calls": 2, "permission_requests": 1, "failed_edits": 0,
            "model_errors": 0, "ended_by": "answer"}
        full = report.build({"endpoint": "e", "model": "m", "started": "now", "sandbox": "none",
                             "permissions": "allow", "max_requests": 5, "timeout": 9},
                            {"a": [row(True, 2, "bugfix"), row(False, 4, "config")],
                             "b": [row(True, 4, "bugfix"), row(True, 4, "config")]})
        self.assertEqual(full["agents"]["a"]["totals"]["solved"], 1)
        self.assertEqual(full["agents"]["a"]["totals"]["by_category"],
                         {"bugfix": "1/1", "config": "0/1"})
        text = report.markdown(full)
        self.assertIn("| a | 1/2 |", text)
        self.assertIn("b against a: prompt tokens 1.33×", text)
        self.assertIn("| t-config | config | ✗ 4 req", text)


if __name__ == "__main__":
    unittest.main()
