// batch.mjs - submit_jobs through `llm-sandbox mcp`, driven by the SDK's own
// client (@modelcontextprotocol/sdk, in tests/mcp/node_modules) over stdio:
// a job file whose programs repeat runs as one batch through the batch
// module: each distinct program once, every id its own result (the copies
// carry copy_of naming the run, their own meta), the summary, progress
// notifications counting the jobs; bad input a tool error naming the field;
// an id that already has a result refused.  With --queue also wait: false
// (the ids at once) and existing "reuse" collecting those results later.
//   node batch.mjs BIN TAG [SERVER ARGS...]   (TAG: before every id)
// Prints "ok NAME" / "FAIL NAME: why" per check and exits 1 on a failure.
import { checker, stdioClient } from "./sdk.mjs";

const [bin, tag, ...serverArgs] = process.argv.slice(2);
const queue = serverArgs.includes("--queue");
const check = checker(queue ? "mcp_batch_queue" : "mcp_batch");

const texts = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text);
const lines = (r) => (texts(r)[1] || "").split("\n").filter((l) => l).map((l) => JSON.parse(l));
const short = (r) => JSON.stringify(r).slice(0, 600);

// six jobs, three programs: b* print 1 (three times), c* print 2 (twice),
// d1 exits 3; the ids carry TAG, the meta each job's own sample
const job = (id, code, more = {}) =>
  JSON.stringify({ id: `${tag}${id}`, lang: "python", code, meta: { sample: id }, ...more });
const file = [
  job("b1", "print(1)", { expect_stdout: "1" }),
  job("b2", "print(1)", { expect_stdout: "1" }),
  job("c1", "print(2)", { expect_stdout: "2" }),
  job("b3", "print(1)", { expect_stdout: "1" }),
  job("c2", "print(2)", { expect_stdout: "2" }),
  job("d1", "import sys; sys.exit(3)"),
].join("\n");

// progress that arrives in one read with the answer is reported late by
// the SDK (sdk.mjs): kept, so that what the server sent is judged
const { client, transport, late } = stdioClient(bin, serverArgs, "llmsb-batch-test");

async function submit(args, progress) {
  return client.callTool({ name: "submit_jobs", arguments: args }, undefined,
    { onprogress: progress, timeout: 300000, resetTimeoutOnProgress: true });
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === "submit_jobs");
  check("listed", tool && tool.inputSchema.required.includes("jobs") &&
    tool.inputSchema.properties.dedup.type === "boolean" &&
    tool.inputSchema.properties.existing.enum.join(",") === "refuse,rerun,reuse",
    JSON.stringify(tool && tool.inputSchema));

  // the batch: each distinct program once, every id its own result
  const progress = [];
  let r = await submit({ jobs: file }, (p) => progress.push(p));
  const res = lines(r);
  const byId = Object.fromEntries(res.map((x) => [x.id, x]));
  const summary = texts(r)[0] || "";
  check("ran_as_one_batch", r.isError === false && res.length === 6 &&
    res.map((x) => x.id).join(",") === ["b1", "b2", "c1", "b3", "c2", "d1"].map((i) => tag + i).join(","),
    short(r));
  check("copies_carry_copy_of",
    byId[`${tag}b2`]?.copy_of === `${tag}b1` && byId[`${tag}b3`]?.copy_of === `${tag}b1` &&
    byId[`${tag}c2`]?.copy_of === `${tag}c1` && !byId[`${tag}b1`]?.copy_of &&
    !byId[`${tag}c1`]?.copy_of && !byId[`${tag}d1`]?.copy_of,
    JSON.stringify(res.map((x) => [x.id, x.copy_of])));
  check("each_result_its_own",
    res.every((x) => x.meta && x.meta.sample === x.id.slice(tag.length)) &&
    byId[`${tag}b2`]?.passed === true && byId[`${tag}b3`]?.stdout === "1\n" &&
    byId[`${tag}c2`]?.stdout === "2\n" && byId[`${tag}d1`]?.status === "runtime_error" &&
    byId[`${tag}d1`]?.exit_code === 3,
    JSON.stringify(res.map((x) => [x.id, x.status, x.passed, x.meta])));
  check("summary_says_what_dedup_saved",
    summary.includes("dedup: 6 jobs, 3 distinct programs run, 3 copies (runs saved: 3)") &&
    /ok +5\n/.test(summary) && /runtime_error +1\n/.test(summary) &&
    summary.includes(`not passed:\n  ${tag}d1 (jobs:6): runtime_error`) &&
    !summary.includes("mcp-"),
    summary);
  // in process the runs are counted (a copy gets its run's result at the
  // end), through the queue the jobs (a copy's result comes with its run's)
  const sent = [...progress, ...late.map(({ progressToken, ...p }) => p)], n = queue ? 6 : 3;
  check("progress_counts_the_jobs", sent.length >= 1 && sent.every((p) => p.total === n) &&
    sent.every((p, i) => i === 0 || p.progress > sent[i - 1].progress) &&
    sent[sent.length - 1].progress === n &&
    sent.every((p) => new RegExp(`^\\d+/${n} done, [01] failed$`).test(p.message)),
    JSON.stringify(sent));

  // bad input: a tool error naming the field, nothing run
  r = await submit({ jobs: file, dedup: "yes" });
  check("bad_argument_named", r.isError && texts(r)[0] === "invalid: dedup: true or false is expected",
    short(r));
  r = await submit({ jobs: `${job("x1", "print(1)")}\n{"id": "${tag}x2", "lang": "cobol", "code": "1"}` });
  check("bad_job_named_at_its_line", r.isError &&
    texts(r)[0].startsWith("invalid: 1 problem(s) in jobs; nothing was ") &&
    texts(r)[0].includes('jobs:2: lang: unknown language "cobol"'), short(r));
  r = await submit({ jobs: `${job("y1", "print(1)", { copies: [{ id: "z" }] })}` });
  check("batch_fields_refused", r.isError &&
    texts(r)[0] === "invalid: jobs:1: copies: written by the batch itself (dedup, recheck_timeouts), not by a job",
    short(r));

  if (!queue) {
    r = await submit({ jobs: file, wait: false });
    check("no_wait_needs_the_queue", r.isError && texts(r)[0].includes("wait: false needs a server started with --queue"),
      short(r));
  } else {
    // the same ids again: refused, their results named
    r = await submit({ jobs: file });
    check("existing_ids_refused", r.isError && texts(r)[0].includes(`jobs:1: id "${tag}b1" already has a result (ok)`) &&
      texts(r)[0].includes('existing: "rerun" runs such jobs again') && !texts(r)[0].includes("mcp-"),
      short(r));
    // wait: false answers with the ids; existing "reuse" collects the results
    const later = [job("e1", "print(5)", { expect_stdout: "5" }), job("e2", "print(5)", { expect_stdout: "5" })].join("\n");
    r = await submit({ jobs: later, wait: false });
    check("no_wait_answers_the_ids", !r.isError && texts(r)[1] === JSON.stringify([`${tag}e1`, `${tag}e2`]) &&
      texts(r)[0].includes("submitted 1 job(s) to") && texts(r)[0].includes("carrying 1 copies"),
      short(r));
    let got;
    for (let i = 0; i < 120; i++) { // until e1 no longer runs
      got = await submit({ jobs: later, existing: "reuse" });
      if (!got.isError) break;
      await new Promise((ok) => setTimeout(ok, 500));
    }
    const e = got && lines(got);
    check("reuse_collects_the_results", got && !got.isError && e.length === 2 &&
      e[0].stdout === "5\n" && e[1].copy_of === `${tag}e1` &&
      texts(got)[0].includes("2 id(s) already had a result: kept (existing: \"reuse\"), not enqueued again"),
      got && short(got));
  }
} catch (e) {
  check("no_exception", false, e.stack || String(e));
} finally {
  await client.close();
}
process.exit(check.failed() ? 1 : 0);
