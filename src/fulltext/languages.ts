/**
 * The languages of full-text search: those for which Orama ships both a stemmer (`@orama/stemmers`) and a stop-word
 * list (`@orama/stopwords`). Each one is imported here, so that every analyzer is ready without a load step.
 */
import { stemmer as arabicStemmer } from "@orama/stemmers/arabic";
import { stemmer as armenianStemmer } from "@orama/stemmers/armenian";
import { stemmer as bulgarianStemmer } from "@orama/stemmers/bulgarian";
import { stemmer as danishStemmer } from "@orama/stemmers/danish";
import { stemmer as dutchStemmer } from "@orama/stemmers/dutch";
import { stemmer as englishStemmer } from "@orama/stemmers/english";
import { stemmer as finnishStemmer } from "@orama/stemmers/finnish";
import { stemmer as frenchStemmer } from "@orama/stemmers/french";
import { stemmer as germanStemmer } from "@orama/stemmers/german";
import { stemmer as greekStemmer } from "@orama/stemmers/greek";
import { stemmer as hungarianStemmer } from "@orama/stemmers/hungarian";
import { stemmer as indianStemmer } from "@orama/stemmers/indian";
import { stemmer as indonesianStemmer } from "@orama/stemmers/indonesian";
import { stemmer as irishStemmer } from "@orama/stemmers/irish";
import { stemmer as italianStemmer } from "@orama/stemmers/italian";
import { stemmer as lithuanianStemmer } from "@orama/stemmers/lithuanian";
import { stemmer as nepaliStemmer } from "@orama/stemmers/nepali";
import { stemmer as norwegianStemmer } from "@orama/stemmers/norwegian";
import { stemmer as portugueseStemmer } from "@orama/stemmers/portuguese";
import { stemmer as romanianStemmer } from "@orama/stemmers/romanian";
import { stemmer as russianStemmer } from "@orama/stemmers/russian";
import { stemmer as sanskritStemmer } from "@orama/stemmers/sanskrit";
import { stemmer as serbianStemmer } from "@orama/stemmers/serbian";
import { stemmer as spanishStemmer } from "@orama/stemmers/spanish";
import { stemmer as swedishStemmer } from "@orama/stemmers/swedish";
import { stemmer as tamilStemmer } from "@orama/stemmers/tamil";
import { stemmer as turkishStemmer } from "@orama/stemmers/turkish";
import { stemmer as ukrainianStemmer } from "@orama/stemmers/ukrainian";
import { stopwords as arabicStopwords } from "@orama/stopwords/arabic";
import { stopwords as armenianStopwords } from "@orama/stopwords/armenian";
import { stopwords as bulgarianStopwords } from "@orama/stopwords/bulgarian";
import { stopwords as danishStopwords } from "@orama/stopwords/danish";
import { stopwords as dutchStopwords } from "@orama/stopwords/dutch";
import { stopwords as englishStopwords } from "@orama/stopwords/english";
import { stopwords as finnishStopwords } from "@orama/stopwords/finnish";
import { stopwords as frenchStopwords } from "@orama/stopwords/french";
import { stopwords as germanStopwords } from "@orama/stopwords/german";
import { stopwords as greekStopwords } from "@orama/stopwords/greek";
import { stopwords as hungarianStopwords } from "@orama/stopwords/hungarian";
import { stopwords as indianStopwords } from "@orama/stopwords/indian";
import { stopwords as indonesianStopwords } from "@orama/stopwords/indonesian";
import { stopwords as irishStopwords } from "@orama/stopwords/irish";
import { stopwords as italianStopwords } from "@orama/stopwords/italian";
import { stopwords as lithuanianStopwords } from "@orama/stopwords/lithuanian";
import { stopwords as nepaliStopwords } from "@orama/stopwords/nepali";
import { stopwords as norwegianStopwords } from "@orama/stopwords/norwegian";
import { stopwords as portugueseStopwords } from "@orama/stopwords/portuguese";
import { stopwords as romanianStopwords } from "@orama/stopwords/romanian";
import { stopwords as russianStopwords } from "@orama/stopwords/russian";
import { stopwords as sanskritStopwords } from "@orama/stopwords/sanskrit";
import { stopwords as serbianStopwords } from "@orama/stopwords/serbian";
import { stopwords as spanishStopwords } from "@orama/stopwords/spanish";
import { stopwords as swedishStopwords } from "@orama/stopwords/swedish";
import { stopwords as tamilStopwords } from "@orama/stopwords/tamil";
import { stopwords as turkishStopwords } from "@orama/stopwords/turkish";
import { stopwords as ukrainianStopwords } from "@orama/stopwords/ukrainian";

/** What one language brings: how it stems a word, and the words too common to search for. */
export interface LanguageRules {
  stem: (word: string) => string;
  stopWords: readonly string[];
}

/** Every language, by the name `createIndex` takes. */
const RULES: Record<string, LanguageRules> = {
  arabic: { stem: arabicStemmer, stopWords: arabicStopwords },
  armenian: { stem: armenianStemmer, stopWords: armenianStopwords },
  bulgarian: { stem: bulgarianStemmer, stopWords: bulgarianStopwords },
  danish: { stem: danishStemmer, stopWords: danishStopwords },
  dutch: { stem: dutchStemmer, stopWords: dutchStopwords },
  english: { stem: englishStemmer, stopWords: englishStopwords },
  finnish: { stem: finnishStemmer, stopWords: finnishStopwords },
  french: { stem: frenchStemmer, stopWords: frenchStopwords },
  german: { stem: germanStemmer, stopWords: germanStopwords },
  greek: { stem: greekStemmer, stopWords: greekStopwords },
  hungarian: { stem: hungarianStemmer, stopWords: hungarianStopwords },
  indian: { stem: indianStemmer, stopWords: indianStopwords },
  indonesian: { stem: indonesianStemmer, stopWords: indonesianStopwords },
  irish: { stem: irishStemmer, stopWords: irishStopwords },
  italian: { stem: italianStemmer, stopWords: italianStopwords },
  lithuanian: { stem: lithuanianStemmer, stopWords: lithuanianStopwords },
  nepali: { stem: nepaliStemmer, stopWords: nepaliStopwords },
  norwegian: { stem: norwegianStemmer, stopWords: norwegianStopwords },
  portuguese: { stem: portugueseStemmer, stopWords: portugueseStopwords },
  romanian: { stem: romanianStemmer, stopWords: romanianStopwords },
  russian: { stem: russianStemmer, stopWords: russianStopwords },
  sanskrit: { stem: sanskritStemmer, stopWords: sanskritStopwords },
  serbian: { stem: serbianStemmer, stopWords: serbianStopwords },
  spanish: { stem: spanishStemmer, stopWords: spanishStopwords },
  swedish: { stem: swedishStemmer, stopWords: swedishStopwords },
  tamil: { stem: tamilStemmer, stopWords: tamilStopwords },
  turkish: { stem: turkishStemmer, stopWords: turkishStopwords },
  ukrainian: { stem: ukrainianStemmer, stopWords: ukrainianStopwords },
};

/** The names of every language, in alphabetical order. */
export const LANGUAGES: readonly string[] = Object.keys(RULES);

/** The language of an index created without one. */
export const DEFAULT_LANGUAGE = "english";

/** The rules of a language, or undefined for a name that is none of {@link LANGUAGES}. */
export function languageRules(language: string): LanguageRules | undefined {
  return Object.hasOwn(RULES, language) ? RULES[language] : undefined;
}
