// node-snapshot.js - the entry of the start-up snapshot of the javascript
// image (/usr/local/lib/llmsb/node.blob).
//
// Debian's node is built without node's own start-up snapshot, so every
// start runs node's bootstrap JavaScript afresh (~25 ms of CPU here).  At
// image build, as root, `node --build-snapshot` runs this file and writes the
// heap node has then (the bootstrap done, nothing of a job's) to the blob,
// read-only to jobs; a node started ahead of its job (agent/prespawn.c,
// node-wait.js) starts from it with `--snapshot-blob` in NODE_OPTIONS, which
// node-wait.js takes out of process.env again before the job's code runs.
// Node checks that the blob was built by this node with the same V8 flags
// (NODE_OPTIONS' --max-old-space-size), or refuses to start: then the agent
// starts the job plainly.
//
// It does nothing on purpose: whatever it loaded or set would be in every
// job's process, where a plain start has not got it.
'use strict';
