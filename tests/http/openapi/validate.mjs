// validate.mjs FILE - FILE is a valid OpenAPI 3.0.3 document (schema and
// $refs, by @apidevtools/swagger-parser) that names every route of the
// HTTP front with the security scheme and the answers every route shares.
// Prints "valid: N paths" and exits 0, or prints why and exits 1.
import SwaggerParser from "@apidevtools/swagger-parser";
import { readFileSync } from "node:fs";

const ROUTES = [
  "get /openapi.json", "get /v1/ping", "post /run_code",
  "post /submissions", "post /submissions/batch", "get /submissions/batch",
  "get /submissions/{token}", "delete /submissions/{token}",
  "get /languages", "get /languages/{id}", "get /statuses", "get /about",
  "post /api/v2/execute", "get /api/v2/runtimes",
];
const SHARED = ["401", "413", "429"]; // answered by the server before any route

function fail(why) {
  console.error(`invalid: ${why}`);
  process.exit(1);
}

const file = process.argv[2];
let doc;
try {
  doc = JSON.parse(readFileSync(file, "utf8"));
} catch (e) {
  fail(`${file}: not JSON: ${e.message}`);
}
if (doc.openapi !== "3.0.3") fail(`openapi is ${JSON.stringify(doc.openapi)}, not "3.0.3"`);
try {
  // validate() dereferences in place: give it a copy, keep doc for the checks below
  await SwaggerParser.validate(structuredClone(doc));
} catch (e) {
  fail(e.message);
}
const bearer = Object.values(doc.components?.securitySchemes ?? {}).some(
  (s) => s.type === "http" && s.scheme === "bearer");
if (!bearer) fail("no bearer security scheme in components.securitySchemes");
for (const r of ROUTES) {
  const [method, path] = r.split(" ");
  const op = doc.paths?.[path]?.[method];
  if (!op) fail(`no ${method.toUpperCase()} ${path}`);
  for (const code of SHARED)
    if (!op.responses?.[code]) fail(`${method.toUpperCase()} ${path} has no ${code} answer`);
}
const retry = doc.components?.responses?.TooManyRequests?.headers?.["Retry-After"];
if (!retry) fail("the 429 answer has no Retry-After header");
console.log(`valid: ${Object.keys(doc.paths).length} paths, ${ROUTES.length} routes checked`);
