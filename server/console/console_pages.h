#ifndef PSTRAIN_SERVER_CONSOLE_CONSOLE_PAGES_H_
#define PSTRAIN_SERVER_CONSOLE_CONSOLE_PAGES_H_

#include "common/net/http_message.h"

namespace pstrain {
namespace console {

// The console's pages: / (the jobs), /jobs/<job> (one job), /cluster (the
// members), each the same document whose script draws what its path names
// from the JSON endpoints, and /console.js and /console.css. Any other
// path, or a method other than GET, is a 4xx page saying so. Every answer
// forbids other origins' scripts, frames and sniffing. Thread-safe.
HttpResponse AnswerConsolePage(const HttpRequest& request);

}  // namespace console
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_CONSOLE_CONSOLE_PAGES_H_
