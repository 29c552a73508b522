#ifndef FANYI_SERVER_HTTP_FILE_TRANSLATION_H_
#define FANYI_SERVER_HTTP_FILE_TRANSLATION_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/pipeline/document_file.h"
#include "common/text/language_detection.h"
#include "server/assembly_pool.h"
#include "server/http/file_store.h"
#include "server/http/http_server.h"
#include "server/http/language_codes.h"
#include "server/http/request_fields.h"
#include "server/model_registry.h"
#include "server/pdf_reader.h"

namespace fanyi {

// Settings of FileTranslation.
struct FileTranslationOptions {
  // How long a file's translation may take before it fails with 504.
  std::chrono::milliseconds translate_timeout{60000};
  // How long a translated file waits for its download.
  std::chrono::seconds time_to_live{600};
  // What the translated files waiting for their download may take in all;
  // /translate_file answers 503 when they would take more.
  std::size_t max_stored_bytes = 256 << 20;
  // What one client's (API key's, else address's) may take; /translate_file
  // answers it 429 when they would take more.
  std::size_t max_client_stored_bytes = 32 << 20;
  // The path the API is served under by a proxy ("/fanyi"; empty: the
  // root), which download addresses start with.
  std::string url_prefix;
  // How uploaded .pdf files are read: by PdfReader when its program is
  // set, else in this process.
  PdfReaderOptions pdf_reader;
};

// LibreTranslate's file routes on fanyi's engine: POST /translate_file
// reads an upload (common/pipeline/document_file.h), translates it as one
// job of its model's TextPipeline, and holds the translated file for
// GET /download_file/<name>, once. Thread-safe.
class FileTranslation {
 public:
  // `models` and `assembly` must outlive this.
  FileTranslation(ModelRegistry& models, AssemblyPool& assembly,
                  const FileTranslationOptions& options);

  // POST /translate_file: the multipart `file` from `source` (or "auto":
  // detected from the document's words, among the languages served into
  // the target, and answered in "detectedLanguage") to `target` (and
  // fanyi's beam_size, glossary, do_not_translate, model), answered
  // with {"translatedFileUrl": ...} on `request`'s host, the file held on
  // `client`'s share (its API key or address). Throws HttpError for what it
  // refuses before translating; answers later otherwise.
  void Translate(const RequestFields& fields, const HttpRequest& request,
                 const std::string& client, HttpResponder respond) const;
  // GET /download_file/<name>: a translated file, once; 404 when there is
  // none of `name`.
  HttpResponse Download(const std::string& name) const;

 private:
  // The language of `file`'s words among the languages served into
  // `target`; HttpError 400 when none is.
  DetectedLanguage DetectFileLanguage(const DocumentFile& file,
                                      const LanguageCode& target) const;

  ModelRegistry& models_;
  AssemblyPool& assembly_;
  const FileTranslationOptions options_;
  const PdfReader pdf_reader_;
  // Shared with the jobs that put their files in it after Translate
  // returns.
  const std::shared_ptr<FileStore> files_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_FILE_TRANSLATION_H_
