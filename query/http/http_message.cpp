#include "query/http/http_message.h"

#include "query/http/json_writer.h"

namespace argus::query {

HttpResponse jsonError(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  JsonWriter(&r.body).beginObject().key("error").value(message).key("message").value(message).endObject();
  return r;
}

}  // namespace argus::query
