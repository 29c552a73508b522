#include "common/model/language_tokens.h"

#include <map>

namespace fanyi {
namespace {

// LibreTranslate's languages by their FLORES-200 codes, as NLLB-200's
// vocabulary holds them.
const std::map<std::string, std::string>& FloresCodes() {
  static const auto* codes = new std::map<std::string, std::string>{
      {"ar", "arb_Arab"},     {"az", "azj_Latn"}, {"bg", "bul_Cyrl"},
      {"bn", "ben_Beng"},     {"ca", "cat_Latn"}, {"cs", "ces_Latn"},
      {"da", "dan_Latn"},     {"de", "deu_Latn"}, {"el", "ell_Grek"},
      {"en", "eng_Latn"},     {"eo", "epo_Latn"}, {"es", "spa_Latn"},
      {"et", "est_Latn"},     {"eu", "eus_Latn"}, {"fa", "pes_Arab"},
      {"fi", "fin_Latn"},     {"fr", "fra_Latn"}, {"ga", "gle_Latn"},
      {"gl", "glg_Latn"},     {"he", "heb_Hebr"}, {"hi", "hin_Deva"},
      {"hu", "hun_Latn"},     {"id", "ind_Latn"}, {"it", "ita_Latn"},
      {"ja", "jpn_Jpan"},     {"ko", "kor_Hang"}, {"lt", "lit_Latn"},
      {"lv", "lvs_Latn"},     {"ms", "zsm_Latn"}, {"nb", "nob_Latn"},
      {"nl", "nld_Latn"},     {"pl", "pol_Latn"}, {"pt", "por_Latn"},
      {"pt-BR", "por_Latn"},  {"ro", "ron_Latn"}, {"ru", "rus_Cyrl"},
      {"sk", "slk_Latn"},     {"sl", "slv_Latn"}, {"sq", "als_Latn"},
      {"sv", "swe_Latn"},     {"th", "tha_Thai"}, {"tl", "tgl_Latn"},
      {"tr", "tur_Latn"},     {"uk", "ukr_Cyrl"}, {"ur", "urd_Arab"},
      {"vi", "vie_Latn"},     {"zh", "zho_Hans"}, {"zh-Hans", "zho_Hans"},
      {"zh-Hant", "zho_Hant"}};
  return *codes;
}

bool Holds(const Vocabulary& vocabulary, const std::string& token) {
  return vocabulary.Token(vocabulary.Id(token)) == token;
}

}  // namespace

std::optional<std::string> LanguageToken(const Vocabulary& vocabulary,
                                         const std::string& language) {
  // M2M-100 names the language alone: "zh-Hant" and "pt-BR" by "zh", "pt".
  const std::string base = language.substr(0, language.find('-'));
  if (!base.empty() && Holds(vocabulary, "__" + base + "__")) {
    return "__" + base + "__";
  }
  const auto flores = FloresCodes().find(language);
  if (flores != FloresCodes().end() && Holds(vocabulary, flores->second)) {
    return flores->second;
  }
  return std::nullopt;
}

bool IsMultilingual(const Vocabulary& vocabulary) {
  return LanguageToken(vocabulary, "en").has_value();
}

}  // namespace fanyi
