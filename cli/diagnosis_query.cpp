#include "cli/diagnosis_query.h"

#include <chrono>
#include <nlohmann/json.hpp>

namespace argus::cli {

namespace {

using Json = nlohmann::json;

double num(const Json& cell) {
  if (cell.is_null()) return 0;
  return cell.is_string() ? std::stod(cell.get<std::string>()) : cell.get<double>();
}
std::string text(const Json& cell) { return cell.is_string() ? cell.get<std::string>() : ""; }

// A row of diagnose() back into a Finding (columns in the function's order).
diagnose::Finding findingOf(const Json& row) {
  diagnose::Finding f;
  const std::string kind = text(row[0]);
  for (int k = 0; k <= static_cast<int>(diagnose::FindingKind::kUnexplained); ++k) {
    if (kind == diagnose::findingKindName(static_cast<diagnose::FindingKind>(k))) f.kind = static_cast<diagnose::FindingKind>(k);
  }
  f.from_step = static_cast<uint64_t>(num(row[1]));
  f.to_step = static_cast<uint64_t>(num(row[2]));
  const std::string ranks = text(row[3]);
  for (size_t at = 0; at < ranks.size();) {
    const size_t end = std::min(ranks.find(',', at), ranks.size());
    f.ranks.push_back(static_cast<uint32_t>(std::stoul(ranks.substr(at, end - at))));
    at = end + 1;
  }
  if (!row[4].is_null()) f.pp_rank = static_cast<uint32_t>(num(row[4]));
  f.link = text(row[5]);
  f.kernel = text(row[6]);
  f.slowdown = num(row[7]);
  f.confidence = num(row[8]);
  f.evidence = text(row[9]);
  return f;
}

}  // namespace

std::string diagnosisQuery(const std::string& job) { return "SELECT * FROM diagnose('" + job + "')"; }

Result<std::vector<diagnose::Finding>> runDiagnosis(QueryTarget& target, const std::string& job, double* secs) {
  const auto t0 = std::chrono::steady_clock::now();
  query::QueryOptions options;
  options.deadline = std::chrono::minutes(5);
  Result<std::string> answer = target.answerJson(diagnosisQuery(job), options);
  if (!answer.isOk()) return answer.status();
  if (secs != nullptr) *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Json body = Json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("rows") || !body["rows"].is_array()) return Status::corruption("diagnose(): the answer has no rows");
  std::vector<diagnose::Finding> out;
  for (const Json& row : body["rows"]) {
    if (!row.is_array() || row.size() < 10) return Status::corruption("diagnose(): a row without the finding's 10 columns");
    out.push_back(findingOf(row));
  }
  return out;
}

}  // namespace argus::cli
