// Builds the reference web client into the Python package (services/webclient/static, served by the gateway at
// /): TypeScript's compiler over the client's sources and the library's (clients/typescript/src), then public/.
// The browser finds the library by the import map in index.html ("souk-client" -> the compiled library).
// Usage: node build.mjs [OUT]   (OUT defaults to services/webclient/static; the tests build into a folder of
// theirs and compare). TypeScript's compiler: ./node_modules (npm ci) or TSC=path/to/tsc.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "..", "..", "services", "webclient", "static"));
const tsc = process.env.TSC ?? join(here, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc)) {
  console.error(`no TypeScript compiler at ${tsc}: run npm ci in clients/web (or set TSC)`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) {
  if (name !== "__init__.py") rmSync(join(out, name), { recursive: true, force: true });
}
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.json"), "--outDir", join(out, "js")], { stdio: "inherit" });
cpSync(join(here, "public"), out, { recursive: true });
console.log(`built ${out}`);
