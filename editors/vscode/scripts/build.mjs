// Bundle src/extension.ts (and vscode-languageclient) into dist/extension.js with esbuild.
// `vscode` is provided by the editor at run time.  Usage: node scripts/build.mjs [--minify] [--watch]
import * as esbuild from "esbuild";
import { rmSync } from "node:fs";

const minify = process.argv.includes("--minify");
rmSync("dist", { recursive: true, force: true });
const options = {
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  external: ["vscode"],
  format: "cjs",
  platform: "node",
  target: "node18",
  sourcemap: !minify,
  minify,
  logLevel: "warning",
};
if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
