#!/usr/bin/env node
// `npx promptshelf`: runs the promptshelf binary that this platform's package
// (promptshelf-<platform>-<arch>, an optional dependency npm installs only where its `os` and
// `cpu` match) carries, with the same arguments, standard streams and exit status, so a host
// can start `npx -y promptshelf serve` as it would start the binary itself.
"use strict";

const { spawnSync } = require("node:child_process");

const platformPackage = `promptshelf-${process.platform}-${process.arch}`;
const executable = process.platform === "win32" ? "promptshelf.exe" : "promptshelf";

let binary;
try {
  binary = require.resolve(`${platformPackage}/bin/${executable}`);
} catch {
  console.error(
    `promptshelf: this package has no binary for ${process.platform}-${process.arch}: ` +
      `${platformPackage} is not installed. If you installed with --omit=optional or ` +
      `--no-optional, install again without it; otherwise promptshelf is not built for this ` +
      `platform yet: install it with \`uvx promptshelf\`, or from source with ` +
      `\`cargo install promptshelf\`.`,
  );
  process.exit(1);
}

const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  console.error(`promptshelf: cannot run ${binary}: ${result.error.message}`);
  process.exit(1);
}
if (result.signal) {
  // Ended by a signal: end the same way, so the caller sees what the binary saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 1);
