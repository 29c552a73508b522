#include "server/http/openapi_spec.h"

namespace fanyi {

std::string_view OpenApiSpec() {
  static constexpr std::string_view kSpec = R"json({
  "openapi": "3.0.3",
  "info": {
    "title": "fanyi",
    "description": "LibreTranslate's HTTP API on fanyi's translation engine. Fields may be sent as a JSON body, an url-encoded or multipart form, or the query string with an empty body. Errors are {\"error\": \"...\"}.",
    "version": "1"
  },
  "paths": {
    "/": {
      "get": {
        "summary": "A page to translate text and files in a browser",
        "responses": {
          "200": {"description": "The page", "content": {"text/html": {"schema": {"type": "string"}}}}
        }
      }
    },
    "/translate": {
      "post": {
        "summary": "Translate text",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/TranslateRequest"}},
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/TranslateRequest"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/TranslateRequest"}}
          }
        },
        "responses": {
          "200": {
            "description": "The translations, in the order of q",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TranslateResponse"}}}
          },
          "400": {"$ref": "#/components/responses/Error"},
          "403": {"$ref": "#/components/responses/Error"},
          "413": {"$ref": "#/components/responses/Error"},
          "429": {"$ref": "#/components/responses/Error"},
          "500": {"$ref": "#/components/responses/Error"},
          "503": {"$ref": "#/components/responses/Error"},
          "504": {"$ref": "#/components/responses/Error"}
        }
      }
    },
    "/detect": {
      "post": {
        "summary": "Detect the language of text (served or not: among the languages LibreTranslate offers)",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/DetectRequest"}},
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/DetectRequest"}}
          }
        },
        "responses": {
          "200": {
            "description": "The languages, most likely first (for an array q, one ranking of all its texts: each language's confidence averaged over the texts it was found in, ranked by that average weighted by their length; with per_text, a list of rankings, one per text)",
            "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/DetectedLanguage"}}}}
          },
          "400": {"$ref": "#/components/responses/Error"},
          "403": {"$ref": "#/components/responses/Error"}
        }
      }
    },
    "/languages": {
      "get": {
        "summary": "The languages served, each with the codes it translates to",
        "responses": {
          "200": {
            "description": "The languages",
            "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Language"}}}}
          }
        }
      }
    },
    "/translate_file": {
      "post": {
        "summary": "Translate a file (.txt, .html, .srt, .md, .docx, .epub, .po) into the same format",
        "description": "SubRip numbering and timings, Markdown code and link targets, and a .docx's formatting, images and styles are kept. The upload is bounded by the server's body limit (413).",
        "requestBody": {
          "required": true,
          "content": {
            "multipart/form-data": {
              "schema": {
                "type": "object",
                "required": ["file", "source", "target"],
                "properties": {
                  "file": {"type": "string", "format": "binary"},
                  "source": {"type": "string", "description": "The file's language (not auto)", "example": "en"},
                  "target": {"type": "string", "example": "zh-Hans"},
                  "api_key": {"type": "string"}
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "Where to download the translated file, once, before it expires",
            "content": {"application/json": {"schema": {"type": "object", "properties": {"translatedFileUrl": {"type": "string"}}}}}
          },
          "400": {"$ref": "#/components/responses/Error"},
          "403": {"$ref": "#/components/responses/Error"},
          "413": {"$ref": "#/components/responses/Error"},
          "429": {"$ref": "#/components/responses/Error"},
          "503": {"$ref": "#/components/responses/Error"},
          "504": {"$ref": "#/components/responses/Error"}
        }
      }
    },
    "/download_file/{name}": {
      "get": {
        "summary": "A translated file, named by translatedFileUrl; removed once downloaded",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "The file", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
          "404": {"$ref": "#/components/responses/Error"}
        }
      }
    },
    "/health": {
      "get": {
        "summary": "Whether the server serves",
        "responses": {
          "200": {"description": "Serving", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"type": "string", "enum": ["ok"]}}}}}},
          "503": {"description": "Not serving (stopping, or a decode engine failed)"}
        }
      }
    },
    "/suggest": {
      "post": {
        "summary": "Stores a suggested translation in the server's --suggestions_db, for fanyi-train --suggestions; 403 without one",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/SuggestRequest"}},
            "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/SuggestRequest"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/SuggestRequest"}}
          }
        },
        "responses": {
          "200": {"description": "Stored", "content": {"application/json": {"schema": {"type": "object", "properties": {"success": {"type": "boolean"}}}}}},
          "400": {"$ref": "#/components/responses/Error"},
          "403": {"$ref": "#/components/responses/Error"},
          "429": {"$ref": "#/components/responses/Error"},
          "503": {"$ref": "#/components/responses/Error"},
          "507": {"$ref": "#/components/responses/Error"}
        }
      }
    },
    "/frontend/settings": {
      "get": {
        "summary": "What LibreTranslate's page reads at start",
        "responses": {
          "200": {"description": "The settings", "content": {"application/json": {"schema": {"type": "object"}}}}
        }
      }
    },
    "/spec": {
      "get": {
        "summary": "This document",
        "responses": {
          "200": {"description": "OpenAPI 3.0", "content": {"application/json": {"schema": {"type": "object"}}}}
        }
      }
    }
  },
  "components": {
    "schemas": {
      "SuggestRequest": {
        "type": "object",
        "required": ["q", "s", "source", "target"],
        "properties": {
          "q": {"type": "string", "description": "The text translated", "example": "Invalid API key"},
          "s": {"type": "string", "description": "Its suggested translation", "example": "API 密钥无效"},
          "source": {"type": "string", "example": "en"},
          "target": {"type": "string", "example": "zh"},
          "api_key": {"type": "string"},
          "model": {"type": "string", "description": "fanyi: the served model corrected, when several serve the pair"}
        }
      },
      "TranslateRequest": {
        "type": "object",
        "required": ["q", "source", "target"],
        "properties": {
          "q": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "A text, or several answered in order"},
          "source": {"type": "string", "description": "A language code, or auto to detect each text's", "example": "en"},
          "target": {"type": "string", "description": "zh, zh-Hans, zh-CN, zh-SG (Simplified), zt, zh-Hant, zh-TW (Traditional, Taiwan), zh-HK (Traditional, Hong Kong), or another served language", "example": "zh-Hans"},
          "format": {"type": "string", "enum": ["text", "html"], "description": "html: tags, attributes, entities and comments are kept; inline tags come back around the words they wrapped"},
          "alternatives": {"type": "integer", "minimum": 0, "description": "Other translations wanted per text: the next-best hypotheses of the beam search, distinct from the translation and each other (fewer when the search finds fewer)"},
          "api_key": {"type": "string"},
          "beam_size": {"type": "integer", "minimum": 0, "description": "fanyi: 0 = the server's default, 1 = greedy"},
          "glossary": {"type": "object", "additionalProperties": {"type": "string"}, "description": "fanyi: term -> its translation"},
          "do_not_translate": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "fanyi: terms kept as written"},
          "translate_template_tokens": {"type": "boolean", "default": false, "description": "fanyi: template tokens (%s, %(name)s, {0}, {{name}}, ${name}, :name, the & of &File, <0>, \\n, emoji) pass through as written unless this is true"},
          "model": {"type": "string", "description": "fanyi: the served model's name"}
        }
      },
      "TranslateResponse": {
        "type": "object",
        "properties": {
          "translatedText": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
          "detectedLanguage": {"oneOf": [{"$ref": "#/components/schemas/DetectedLanguage"}, {"type": "array", "items": {"$ref": "#/components/schemas/DetectedLanguage"}}], "description": "With source auto only, per text"},
          "alternatives": {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}], "description": "When asked for: per text, the other translations"},
          "confidence": {"oneOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}}], "description": "fanyi: per text, how sure the model was: e to the mean log-probability of the translation's tokens; 1 for a text not translated. It ranks translations; it is not a probability of being right"},
          "pivot": {"oneOf": [{"$ref": "#/components/schemas/Pivot"}, {"type": "array", "items": {"oneOf": [{"$ref": "#/components/schemas/Pivot"}, {"type": "null"}]}}], "description": "fanyi: when a text was translated through English because no one model serves the pair; per text for an array (null for a text one model translated)"}
        }
      },
      "Pivot": {
        "type": "object",
        "properties": {
          "language": {"type": "string", "description": "The language the text was translated through"},
          "models": {"type": "array", "items": {"type": "string"}, "description": "The model that translated into it, then the one that translated out of it"}
        }
      },
      "DetectRequest": {
        "type": "object",
        "required": ["q"],
        "properties": {
          "q": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
          "api_key": {"type": "string"},
          "per_text": {"type": "boolean", "description": "fanyi: for an array q, a ranking per text (a list of such lists) instead of one for all"}
        }
      },
      "DetectedLanguage": {
        "type": "object",
        "properties": {
          "language": {"type": "string"},
          "confidence": {"type": "number", "minimum": 0, "maximum": 100}
        }
      },
      "Language": {
        "type": "object",
        "properties": {
          "code": {"type": "string"},
          "name": {"type": "string"},
          "targets": {"type": "array", "items": {"type": "string"}}
        }
      },
      "Error": {
        "type": "object",
        "properties": {"error": {"type": "string"}}
      }
    },
    "responses": {
      "Error": {
        "description": "What is wrong",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      }
    }
  }
})json";
  return kSpec;
}

}  // namespace fanyi
