"""The club's pages and API, one module per audience: accounts, pages, api, organiser."""
