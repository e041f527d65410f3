#!/usr/bin/env node
// `npx tandem-acp` / `tandem`: runs the tandem binary built for this machine. npm installs
// only the platform package whose `os` and `cpu` match (an optional dependency), so the
// wrapper finds it, hands over arguments and stdio (the ACP stream), passes signals on, and
// exits as tandem did.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const PACKAGES = {
  "darwin-arm64": "tandem-acp-darwin-arm64",
  "darwin-x64": "tandem-acp-darwin-x64",
  "linux-arm64": "tandem-acp-linux-arm64",
  "linux-x64": "tandem-acp-linux-x64",
  "win32-arm64": "tandem-acp-win32-arm64",
  "win32-x64": "tandem-acp-win32-x64",
};

const platform = `${process.platform}-${process.arch}`;
const pkg = PACKAGES[platform];
if (!pkg) {
  process.stderr.write(
    `tandem: no build for ${platform}; builds exist for ${Object.keys(PACKAGES).join(", ")}.\n` +
      "Build it from source instead: cargo install --locked --git https://github.com/tandem-agent/tandem tandem\n",
  );
  process.exit(1);
}

const exe = process.platform === "win32" ? "tandem.exe" : "tandem";
let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  process.stderr.write(
    `tandem: the package ${pkg} is not installed. It is an optional dependency of tandem-acp: ` +
      "reinstall without --omit=optional / --no-optional.\n",
  );
  process.exit(1);
}

// How the user runs tandem, so that the commands it tells them to type work: npx puts no
// `tandem` on the PATH, so there the advice is `npx tandem-acp login`, not `tandem login`.
// Under npx it is the package that is named (`npx tandem` would fetch another package).
const bin = path.basename(process.argv[1] || "tandem-acp").replace(/\.js$/, "");
const invokedAs = process.env.npm_lifecycle_event === "npx" ? "npx tandem-acp" : bin;
const child = spawn(binary, process.argv.slice(2), {
  stdio: "inherit",
  windowsHide: true,
  env: { ...process.env, TANDEM_INVOKED_AS: invokedAs },
});
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => forward(signal));
child.on("error", (error) => {
  process.stderr.write(`tandem: cannot start ${binary}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever started us sees what happened.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
