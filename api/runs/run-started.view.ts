/** The answer to a request that started a run (the WorkflowStarted schema): the run's view, abridged. */
export function runStartedView<V extends { id: string; status: string; workflow_id: string; run_id: string | null; links: { self: string } }>(view: V) {
  return { id: view.id, status: view.status, workflow_id: view.workflow_id, run_id: view.run_id, links: view.links };
}
