"""Text for people: bot-supplied text made safe to show (text), game events told as lines and
the one wrapping rule (render), bots' notes cut to what a record keeps (notes)."""
