/* stream.h - the agent stream over a Kubernetes attach/exec WebSocket
 * (channel protocols v5/v4.channel.k8s.io), spoken by hand (RFC 6455) on a
 * raw connection from http.c: Debian's libcurl has no WebSocket.  Channel 0
 * is the agent's stdin, 1 its stdout (read), 2 its stderr (the stream log),
 * 3 the Status that says the remote process ended. */
#ifndef LLMSB_KUBERNETES_STREAM_H
#define LLMSB_KUBERNETES_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "backends/backend.h"
#include "backends/http/http.h"

/* ---- the stream --------------------------------------------------------- */

/* Opens the WebSocket at path (e.g. "/api/v1/namespaces/NS/pods/P/attach?
 * container=agent&stdin=true&stdout=true&stderr=true") on client c,
 * offering subprotocols v5.channel.k8s.io and v4.channel.k8s.io, checks the
 * 101, Sec-WebSocket-Accept and the chosen protocol, and wraps it as the
 * agent stream (*out; its close op frees it).  The stream has its own
 * connection: c may be used for other requests or released while it lives.
 * A stream is used by one thread at a time (read answers pings by writing). */
int kubernetes_stream_open(struct http_client *c, const char *path, struct backend_stream **out,
                           struct llmsb_err *err);

/* The protocol the server chose: 5 or 4 (0 for a stream not made by
 * kubernetes_stream_open). */
int kubernetes_stream_protocol(const struct backend_stream *s);

/* The message of the Status the server sent on channel 3 when the remote
 * process ended (its status, "Success" or "Failure", when it had no
 * message); "" before any.  Untrusted text: escape it before logging.  Valid
 * until the stream is closed. */
const char *kubernetes_stream_status(const struct backend_stream *s);

/* The remote process's exit code from that Status: 0 for Success, the
 * ExitCode cause of a NonZeroExitCode failure, -1 when there is no Status
 * yet or it carries no exit code. */
int kubernetes_stream_exit_code(const struct backend_stream *s);

/* Ends the agent's stdin but keeps reading its output: sends the v5 close
 * of channel 0 ([0xFF, 0x00]).  v4 cannot do that (LLMSB_ERR_INVALID): only
 * closing the whole stream ends stdin there. */
int kubernetes_stream_close_stdin(struct backend_stream *s, struct llmsb_err *err);

#endif
