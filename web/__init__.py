"""Web plumbing every app imports (the typed HTMX request, page rendering, access and role gates, engine
errors as HTTP statuses). Not an app: no models, no views; it imports no app but the engine's."""
