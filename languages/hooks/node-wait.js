// node-wait.js - the wait of a node started ahead of its job (agent/prespawn.c).
//
// The agent starts a job's run step (`node /work/main.js`, the job's env,
// limits, uid, pipes) before the job arrives, with "--snapshot-blob
// <node.blob beside this file> --require <this file>" (the language row's
// words) added to NODE_OPTIONS.  Node loads this file before the main module; it
// says ready ("R") on fd 1022, then blocks until the agent writes "g" on fd
// 1023 (the job's files are unpacked by then), puts NODE_OPTIONS back as the
// job set it, closes both descriptors, takes itself off node's lists of
// loaded and preloaded modules and returns: node goes on to the main module
// by its own path, as without the hook.  Anything else (EOF: the agent ended
// it; an error) exits at once with status 70, before any of the job's code.
// Nothing here may print, throw or stay behind for the program to see.
//
// It reads and writes through node's fs binding, not require('fs'): a
// user-land require of a builtin builds that builtin's ESM facade, which
// costs this start ~5 ms (node 18); the binding has no such cost and does
// not warn (it would with NODE_PENDING_DEPRECATION, which the env of a
// job started ahead never has: job/job.c starts one only for a job with
// no env of its own).
'use strict';
(function () {
  const READY_FD = 1022;
  const GO_FD = 1023;
  // what the agent added to NODE_OPTIONS: the language row's words, the
  // start-up snapshot beside this file (node-snapshot.js) and this file
  const blob = __filename.slice(0, __filename.lastIndexOf('/') + 1) + 'node.blob';
  const added = [`--snapshot-blob ${blob} --require ${__filename}`, `--require ${__filename}`];
  const v = process.env.NODE_OPTIONS;
  const mine = added.find((a) => v === a || (typeof v === 'string' && v.endsWith(' ' + a)));
  const b = Buffer.alloc(1);
  let n = -1;

  // Node loads its --require modules again in every Worker thread, whose
  // env is a copy of the main thread's (the words taken out by then): only
  // the process the agent started with them waits.
  if (mine !== undefined) {
    const fs = process.binding('fs');
    let ctx = {};
    fs.writeString(READY_FD, 'R', null, 'utf8', undefined, ctx);
    if (ctx.errno !== undefined)
      process.reallyExit(70);
    fs.close(READY_FD, undefined, {});
    do {
      ctx = {};
      n = fs.read(GO_FD, b, 0, 1, -1, undefined, ctx);
    } while (ctx.code === 'EINTR' || ctx.code === 'EAGAIN');
    fs.close(GO_FD, undefined, {});
    if (ctx.errno !== undefined)
      n = -1;
    if (n !== 1 || b[0] !== 0x67)
      process.reallyExit(70);
    // the agent wrote "<job's value> <added>", or <added> alone when the
    // job had no NODE_OPTIONS
    if (v === mine)
      delete process.env.NODE_OPTIONS;
    else
      process.env.NODE_OPTIONS = v.slice(0, v.length - mine.length - 1);
  }
  // the list node keeps of its --require modules: this one is the last
  const pre = process._preload_modules;
  if (Array.isArray(pre) && pre[pre.length - 1] === __filename)
    pre.pop();
  const Module = module.constructor;
  delete Module._cache[__filename];
  for (const k of Object.keys(Module._pathCache))
    if (Module._pathCache[k] === __filename)
      delete Module._pathCache[k];
})();
