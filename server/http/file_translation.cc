#include "server/http/file_translation.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/formats/translation_memory.h"
#include "common/pipeline/document_file.h"
#include "common/pipeline/documents.h"
#include "server/http/language_codes.h"
#include "server/http/libretranslate_fields.h"
#include "server/pivot_job.h"
#include "server/text_job.h"

namespace fanyi {
namespace {

// The root of this server's URLs as the client reached it, for the links
// an answer gives: the Host it sent (behind a proxy, with the scheme the
// proxy forwards); empty, for links from the root, when it sent none.
std::string ClientBaseUrl(const HttpRequest& request) {
  const std::string host = request.Header("Host");
  if (host.empty()) return "";
  const std::string scheme =
      request.Header("X-Forwarded-Proto") == "https" ? "https" : "http";
  return scheme + "://" + host;
}

// A Content-Disposition that saves the download as `filename`: an ASCII
// fallback, and the name itself percent-encoded (RFC 6266).
std::string AttachmentDisposition(const std::string& filename) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string ascii;
  std::string encoded;
  for (unsigned char c : filename) {
    const bool plain = std::isalnum(c) || c == '.' || c == '-' || c == '_';
    ascii.push_back(plain ? static_cast<char>(c) : '_');
    if (plain) {
      encoded.push_back(static_cast<char>(c));
    } else {
      encoded += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + encoded;
}

}  // namespace

FileTranslation::FileTranslation(ModelRegistry& models, AssemblyPool& assembly,
                                 const FileTranslationOptions& options)
    : models_(models),
      assembly_(assembly),
      options_(options),
      pdf_reader_(options.pdf_reader),
      files_(std::make_shared<FileStore>(options.time_to_live,
                                         options.max_stored_bytes,
                                         options.max_client_stored_bytes)) {}

void FileTranslation::Translate(const RequestFields& fields,
                                const HttpRequest& request,
                                const std::string& client,
                                HttpResponder respond) const {
  const UploadedFile* upload = fields.File("file");
  if (upload == nullptr) {
    throw HttpError(400, "Invalid request: missing file parameter");
  }
  const std::string source_code = RequiredCode(fields, "source");
  const std::string target_code = RequiredCode(fields, "target");
  const std::optional<LanguageCode> target = ReadLanguageCode(target_code);
  if (!target) throw HttpError(400, target_code + " is not supported");
  std::shared_ptr<const DocumentFile> file;
  try {
    file = std::make_shared<const DocumentFile>(
        upload->filename, upload->content,
        options_.pdf_reader.program.empty()
            ? DocumentFile::PdfToWord()
            : [this](const std::string& pdf) {
                return pdf_reader_.WordDocument(pdf);
              });
  } catch (const std::invalid_argument& e) {
    throw HttpError(400, std::string("Invalid request: file: ") + e.what());
  }
  std::optional<DetectedLanguage> detected;
  if (source_code == "auto") detected = DetectFileLanguage(*file, *target);
  const std::optional<LanguageCode> source =
      detected ? LanguageCode{detected->language, std::nullopt}
               : ReadLanguageCode(source_code);
  if (!source) throw HttpError(400, source_code + " is not supported");
  // A .po file's header names the language, and for Chinese the script,
  // that it translates into ("zh_TW" is Traditional).
  if (std::string language = file->language(); !language.empty()) {
    std::replace(language.begin(), language.end(), '_', '-');
    const std::optional<LanguageCode> catalog = ReadLanguageCode(language);
    if (!LanguageTagIs(language, target->language) ||
        (catalog && catalog->script && target->script &&
         *catalog->script != *target->script)) {
      throw HttpError(
          400, "Invalid request: file: the .po file translates into \"" +
                   file->language() + "\" (its header's Language), not \"" +
                   target_code + "\"");
    }
  }
  const ModelRoute route =
      ChooseRoute(models_, source->language, target->language,
                  detected ? source->language : source_code, target_code,
                  StringField(fields, "model"));
  TextRequest text_request;
  text_request.field = "file";
  text_request.indexed = false;
  text_request.format = file->format();
  for (const std::string& text : file->texts()) {
    text_request.texts.push_back(text);
  }
  text_request.beam_size =
      IntegerField(fields, "beam_size", 0, 0, kMaxRequestedBeam);
  text_request.glossary = ReadGlossary(fields);
  text_request.do_not_translate = StringList(fields, "do_not_translate");
  text_request.template_tokens =
      !BooleanField(fields, "translate_template_tokens", false);
  if (route.back()->translator().pipeline().writes_chinese()) {
    text_request.script = target->script;
  }
  TextJob job;
  job.texts = PrepareRoute(route, text_request);  // 400 when refused.
  job.deadline = std::chrono::system_clock::now() + options_.translate_timeout;
  if (request.client_gone != nullptr) {
    job.cancelled = [gone = request.client_gone] { return gone->load(); };
  }
  job.done = [files = files_, file, detected,
              base_url = ClientBaseUrl(request) + options_.url_prefix,
              name = file->TranslatedName(target_code), client,
              share = options_.max_client_stored_bytes,
              respond](const grpc::Status& status,
                       std::vector<TextTranslation> translations) {
    if (!status.ok()) return respond(StatusResponse(status));
    std::vector<std::string> texts;
    for (TextTranslation& translation : translations) {
      texts.push_back(std::move(translation.text));
    }
    StoredFile stored{name, file->ContentType(), ""};
    try {
      stored.content = file->Write(texts);
    } catch (const std::exception& e) {
      return respond(ErrorResponse(
          500, std::string("writing the translated file failed: ") + e.what()));
    }
    FileStore::Refusal refusal = FileStore::Refusal::kNone;
    const std::optional<std::string> stored_name =
        files->Put(std::move(stored), client, &refusal);
    if (refusal == FileStore::Refusal::kClientShare) {
      return respond(ErrorResponse(
          429,
          "Slowdown: your translated files waiting for their download "
          "would take more than " +
              std::to_string(share) +
              " bytes, a client's share; download them first"));
    }
    if (!stored_name) {
      return respond(
          ErrorResponse(503,
                        "Translated files waiting for their download fill the "
                        "server; download them, or try again later"));
    }
    nlohmann::json body = {
        {"translatedFileUrl", base_url + "/download_file/" + *stored_name}};
    if (detected) {
      body["detectedLanguage"] = {{"confidence", detected->confidence},
                                  {"language", detected->language}};
    }
    respond(JsonResponse(200, body));
  };
  if (grpc::Status status =
          SubmitRoute(assembly_, route, std::move(job), text_request);
      !status.ok()) {
    respond(StatusResponse(status));
  }
}

DetectedLanguage FileTranslation::DetectFileLanguage(
    const DocumentFile& file, const LanguageCode& target) const {
  std::vector<std::string> candidates = SourcesInto(models_, target.language);
  if (candidates.empty()) {
    throw HttpError(400, target.language + " is not supported");
  }
  const int depth = models_.limits().max_document_depth;
  // The document's words, not its markup, up to a sample's worth: CLD2
  // needs a few hundred letters, and a long file's first pages tell.
  constexpr std::size_t kSampleBytes = 64 << 10;
  std::string words;
  for (const std::string& text : file.texts()) {
    if (words.size() >= kSampleBytes) break;
    try {
      words += file.format() == TextFormat::kText
                   ? text
                   : ReadDocument(text, file.format(), depth).Words();
    } catch (const std::invalid_argument&) {
      continue;  // The translation will say what is wrong with it.
    }
    words += '\n';
  }
  // Cut at a character's start: a broken last character would make the
  // sample invalid UTF-8.
  std::size_t end = std::min(words.size(), kSampleBytes);
  while (end > 0 && end < words.size() &&
         (static_cast<unsigned char>(words[end]) & 0xc0) == 0x80) {
    --end;
  }
  words.resize(end);
  try {
    return DetectLanguages(words, candidates).front();
  } catch (const std::invalid_argument& e) {
    throw HttpError(400, std::string("Invalid request: file: ") + e.what());
  }
}

HttpResponse FileTranslation::Download(const std::string& name) const {
  std::optional<StoredFile> file = files_->Take(name);
  if (!file) {
    return ErrorResponse(404,
                         "Not Found: no translated file " + name +
                             " (downloaded already, expired, or never made)");
  }
  HttpResponse response;
  response.content_type = file->content_type;
  response.body = std::move(file->content);
  response.headers.emplace_back("Content-Disposition",
                                AttachmentDisposition(file->filename));
  return response;
}

}  // namespace fanyi
