process.env.DETFLOW_TEST_DB = 'pglite';
