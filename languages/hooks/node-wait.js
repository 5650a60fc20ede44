// node-wait.js - the wait of a node started ahead of its job (agent/prespawn.c).
//
// The agent starts a job's run step (`node /work/main.js`, the job's env,
// limits, uid, pipes) before the job arrives, with "--require <this file>"
// added to NODE_OPTIONS.  Node loads this file before the main module; it
// says ready on fd 1022, then blocks until the agent writes "g" on fd 1023
// (the job's files are unpacked by then), puts NODE_OPTIONS back as the job
// set it, closes both descriptors, forgets this module and returns: node
// goes on to the main module by its own path, as without the hook.  Any
// other word (EOF: the agent ended it) exits at once.  Nothing here may
// print, throw or stay behind for the program to see.
'use strict';
(function () {
  const fs = require('fs');
  const Module = require('module');
  const READY_FD = 1022;
  const GO_FD = 1023;
  const added = '--require ' + __filename;
  const b = Buffer.alloc(1);
  let n = 0;

  try {
    fs.writeSync(READY_FD, 'R');
  } catch (e) {
    process.reallyExit(70);
  }
  fs.closeSync(READY_FD);
  for (;;) {
    try {
      n = fs.readSync(GO_FD, b, 0, 1, null);
      break;
    } catch (e) {
      if (e.code !== 'EAGAIN' && e.code !== 'EINTR')
        break;
    }
  }
  fs.closeSync(GO_FD);
  if (n !== 1 || b[0] !== 0x67)
    process.reallyExit(70);
  // the agent wrote "<job's value> <added>", or <added> alone when the job
  // had no NODE_OPTIONS
  const v = process.env.NODE_OPTIONS;
  if (v === added)
    delete process.env.NODE_OPTIONS;
  else if (typeof v === 'string' && v.endsWith(' ' + added))
    process.env.NODE_OPTIONS = v.slice(0, v.length - added.length - 1);
  // the list node keeps of its --require modules: this one is the last
  const pre = process._preload_modules;
  if (Array.isArray(pre) && pre[pre.length - 1] === __filename)
    pre.pop();
  delete Module._cache[__filename];
  for (const k of Object.keys(Module._pathCache))
    if (Module._pathCache[k] === __filename)
      delete Module._pathCache[k];
})();
