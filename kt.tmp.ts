import { execFile } from "node:child_process"; import { promisify } from "node:util"; const ef = promisify(execFile);
import { mkdtempSync, writeFileSync } from 'node:fs';
import { silentLogger } from 'rxkube';
import { startApiServer } from 'rxkube/testing';
const s = await startApiServer({ logger: silentLogger });
const dir = mkdtempSync('/tmp/kt-');
await s.writeKubeconfig(`${dir}/kc`);
const run = async (args: string[], input?: string) => {
  try { const p = ef('kubectl', ['--kubeconfig', `${dir}/kc`, '--cache-dir', `${dir}/cache`, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir } }); if (input) { p.child.stdin!.end(input); } const r = await p; return r.stdout + (r.stderr ? 'STDERR:' + r.stderr : ''); }
  catch (e: any) { return `EXIT ${e.code}\nSTDOUT:${e.stdout}\nSTDERR:${e.stderr}`; }
};
for (const cmd of JSON.parse(process.argv[2])) { console.log('$ kubectl', cmd.join(' ')); console.log(await run(cmd, process.argv[3])); }
await s.close();
