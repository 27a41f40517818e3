// Reads each file named on the command line with Continue's own config parser
// (`@continuedev/config-yaml`'s `parseConfigYaml`, what Continue runs on its config.yaml and
// block files); prints `FILE: ok`, or `FILE: ` and the parser's error and exits 1.
import { readFileSync } from "node:fs";
import { parseConfigYaml } from "@continuedev/config-yaml";

let failed = false;
for (const file of process.argv.slice(2)) {
  try {
    parseConfigYaml(readFileSync(file, "utf8"));
    console.log(`${file}: ok`);
  } catch (error) {
    console.log(`${file}: ${error.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
