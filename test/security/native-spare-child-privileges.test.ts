// Threat: the child a warm parent makes ahead of its run (src/engines/native/parent.py) sits alive
// beside the child serving another tenant's run, for as long as it waits for its request. If it
// waited holding what the parent holds (CAP_SYS_ADMIN and CAP_NET_ADMIN in the jail's user
// namespace, no child filter), anything that reached it before its run would start from there. A
// child drops every capability, sets no_new_privs and stacks the child filter before it reads its
// request: this checks, from the host, every child alive beside a run, on both parents a stateless
// run may have (src/engines/native/route.ts).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { createEngine, type NativeEngine } from "../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import { NATIVE_PARENTS } from "../helpers/native.ts";

const options = resolveOptions({ python: { engine: "native", pool: 1 } });
let engine: NativeEngine;

interface Proc {
  pid: number;
  ppid: number;
  nspid: string[];
  status: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      out.push({
        pid: Number(name),
        ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
        nspid: /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/) ?? [],
        status,
      });
    } catch {
      // gone
    }
  }
  return out;
}

/** The children of the warm parent under jail `root` (its descendants four PID namespaces deep). */
function childrenOf(root: number): Proc[] {
  const all = processes();
  const inside = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all)
      if (!inside.has(p.pid) && inside.has(p.ppid)) {
        inside.add(p.pid);
        grew = true;
      }
  }
  return all.filter((p) => inside.has(p.pid) && p.nspid.length === 4);
}

const field = (p: Proc, name: string) => new RegExp(`^${name}:\\s+(\\S+)`, "m").exec(p.status)?.[1];
const dropped = (p: Proc) =>
  field(p, "CapEff") === "0000000000000000" &&
  field(p, "CapPrm") === "0000000000000000" &&
  field(p, "NoNewPrivs") === "1" &&
  field(p, "Seccomp") === "2" &&
  Number(field(p, "Seccomp_filters")) >= 2;

for (const { name, light, route } of NATIVE_PARENTS)
  describe(`native warm parent (${name}): the child made ahead of its run`, () => {
    before(async () => {
      engine = (await createEngine(options)) as NativeEngine;
    });
    after(() => engine.close());

    it("holds no capability and has its filter while it waits, beside a run being served", async () => {
      const [jail] = light ? engine.light!.pids : engine.stackParentPids;
      assert.ok(jail !== undefined);
      // A run that stays in flight while the next child is made ahead of it.
      const request = resolveRequest(
        {
          language: "python",
          engine: "native",
          code: route("import time\ntime.sleep(2)\n1"),
          limits: { timeoutMs: 20_000 },
        },
        options,
      );
      assert.equal(engine.routesLight(request), light, "the run goes to the parent under test");
      const running = engine.run(request);
      let seen: Proc[] = [];
      for (let i = 0; i < 100; i++) {
        seen = childrenOf(jail);
        // Two children: the one serving and the one waiting, both past their setup.
        if (seen.length >= 2 && seen.every(dropped)) break;
        await sleep(20);
      }
      assert.ok(seen.length >= 2, `expected the serving child and one made ahead, saw ${seen.length}`);
      for (const p of seen)
        assert.ok(
          dropped(p),
          `child ${p.pid}: CapEff ${field(p, "CapEff")} CapPrm ${field(p, "CapPrm")} NoNewPrivs ${field(p, "NoNewPrivs")} Seccomp ${field(p, "Seccomp")}/${field(p, "Seccomp_filters")}`,
        );
      const r = await running;
      assert.equal(r.ok && r.value, 1, JSON.stringify(r));
    });
  });
