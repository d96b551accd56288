// Compiles every inputSchema and outputSchema of a tools/list answer (JSON
// on stdin) with Ajv and ajv-formats, set up as the TypeScript MCP SDK sets
// them up (strict off, formats validated). Prints each warning or error and
// exits 1 if there was any.
import { createRequire } from "node:module";
const require = createRequire(process.env.AJV_NODE_MODULES + "/");
const Ajv = require("ajv");
const addFormats = require("ajv-formats");

const said = [];
const logger = {
  log: (...a) => said.push("log: " + a.join(" ")),
  warn: (...a) => said.push("warn: " + a.join(" ")),
  error: (...a) => said.push("error: " + a.join(" ")),
};
const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, logger });
addFormats.default ? addFormats.default(ajv) : addFormats(ajv);

let input = "";
for await (const chunk of process.stdin) input += chunk;
const tools = JSON.parse(input);
let compiled = 0;
for (const tool of tools) {
  for (const key of ["inputSchema", "outputSchema"]) {
    if (!tool[key]) continue;
    try {
      ajv.compile(tool[key]);
      compiled += 1;
    } catch (e) {
      said.push(`error: ${tool.name}.${key}: ${e.message}`);
    }
  }
}
for (const line of said) console.log(line);
console.log(`${compiled} schemas compiled, ${said.length} warnings or errors`);
process.exit(said.length ? 1 : 0);
