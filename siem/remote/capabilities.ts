import type { AdapterCapabilities } from '../adapter';

/**
 * What every remote kind can do: the SIEM holds the events, runs the searches and the scheduled
 * detection, and reports its alerts and runs. No search window limit of its own (the SIEM's
 * retention bounds a search). Kinds differ only in their query language.
 */
export function remoteCapabilities(queryLanguage: string): AdapterCapabilities {
  return {
    queryLanguage,
    fixtures: true,
    historicalSearch: true,
    liveEvaluation: true,
    deploy: true,
    alertStats: true,
    runStats: true,
    fieldPresence: true,
    maxSearchWindowDays: null,
  };
}
