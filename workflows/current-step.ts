import { defineQuery, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { RunQuery } from './contracts';

/** The step a run is at, in words (e.g. `waiting for approval …`); null before its first step. */
export const currentStepQuery = defineQuery<string | null>(RunQuery.currentStep);

/**
 * Starts tracking the run's current step and returns the function that moves it on. Each step is
 * answered by the `currentStep` query and set as the run's current details, which the Temporal UI
 * shows on the run's page. Neither creates a command, so runs recorded before replay unchanged.
 */
export function trackSteps(): (step: string) => void {
  let current: string | null = null;
  setHandler(currentStepQuery, () => current);
  return (step) => {
    current = step;
    setCurrentDetails(`**Current step:** ${step}`);
  };
}
