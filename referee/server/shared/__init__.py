"""What the club's two processes share: the web process (`referee.server.club`, Django) and
the season runner (`referee.server.runner`) meet here and nowhere else.

- `clubfolder`: the club's data folder and every path in it (`ClubFolder`);
- `seasonkeys`: the season file's keys, typed, with their defaults (`RunnerSettings`,
  `ServerLimits`); `seasonread`: the file as a process reads it at each use (last good copy);
  `seasonfile`: the file as `referee serve` writes it, and its changes in words;
- `database`: the type of the runner's handle on the club's database;
- `diskuse`: a student's uploads on disk (budget and retention); `ratinghistory`: a bot's
  rating over the season and its chart; `botnames`: the bots' names.

These modules import nothing of the club's web side and nothing of the runner: only the
club's models (the database both read and write) and the rooms below the server.
"""
